// pi-cli with `sandbox: docker` on a real Docker engine: the real pi CLI in a --network none container, reaching
// only the fake provider on this host's loopback. Every check the CLI families share runs against it.
import { beforeAll, expect, vi } from "vitest";
import { FAKE_KEY } from "../../testing/cli.js";
import { describeCliFamily } from "../../testing/cli-family.js";
import { ensureDockerEngine } from "../../testing/docker-engine.js";
import { dockerSandboxed } from "../../testing/docker-sandbox.js";
import { PiCliFactory } from "../pi-cli/factory.js";
import { BASE_IMAGE } from "./docker-sandbox.js";

vi.setConfig({ testTimeout: 180_000, hookTimeout: 600_000 });

beforeAll(async () => {
  expect(await ensureDockerEngine()).toBe(BASE_IMAGE);
});

describeCliFamily({
  harness: "pi-cli",
  program: "pi",
  npmPackage: "@mariozechner/pi-coding-agent",
  factory: dockerSandboxed((options) => new PiCliFactory(options)),
  provider: { path: "/v1", model: "fake-model" },
  shellCall: { name: "bash", arguments: { command: "ls -1" } },
  bound: { echo: "echo", shell: { name: "bash", arguments: { command: "touch shell.txt" } } },
  lastMessage: { stop_reason: "stop", usage: { input: expect.any(Number) } },
  keyHeader: ["authorization", `Bearer ${FAKE_KEY}`],
  resumedToolResult: '"role":"tool"',
  appendOnly: true,
  checkpointFiles: (files) => {
    expect(files.some((f) => f.path.startsWith("pi/sessions/") && f.append_only)).toBe(true);
  },
  // pi never asks before a tool (its own tests gate the tools up front). Its fake CLIs live in a temp dir the
  // container does not mount: a program outside Brain's install cannot run in the sandbox.
  skip: ["approvals", "garbage"],
});
