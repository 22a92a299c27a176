// codex with `sandbox: docker` on a real Docker engine: the real Codex CLI in a --network none container, reaching
// only the fake provider on this host's loopback. Every check the CLI families share runs against it.
import { beforeAll, expect, vi } from "vitest";
import { FAKE_KEY } from "../../testing/cli.js";
import { describeCliFamily } from "../../testing/cli-family.js";
import { ensureDockerEngine } from "../../testing/docker-engine.js";
import { dockerSandboxed } from "../../testing/docker-sandbox.js";
import { CodexFactory } from "../codex/factory.js";
import { BASE_IMAGE } from "./docker-sandbox.js";

vi.setConfig({ testTimeout: 180_000, hookTimeout: 600_000 });

beforeAll(async () => {
  expect(await ensureDockerEngine()).toBe(BASE_IMAGE);
});

describeCliFamily({
  harness: "codex",
  program: "codex",
  npmPackage: "@openai/codex",
  factory: dockerSandboxed((options) => new CodexFactory(options)),
  provider: { path: "/v1", model: "fake-model" },
  shellCall: { name: "exec_command" },
  exactText: false,
  lastMessage: { usage: { input: expect.any(Number) } },
  keyHeader: ["authorization", `Bearer ${FAKE_KEY}`],
  resumedToolResult: "function_call_output",
  appendOnly: true,
  checkpointFiles: (files) => {
    expect(files.map((f) => f.path)).toContain("codex.json");
    expect(files.some((f) => f.path.includes("/rollout-") && f.append_only)).toBe(true);
  },
  shellTool: "exec_command",
  bound: { echo: "mcp__brain.echo", shell: { name: "exec_command", arguments: { cmd: "touch shell.txt" } } },
  // Its fake CLIs live in a temp dir the container does not mount: a program outside Brain's install cannot run
  // in the sandbox.
  skip: ["garbage"],
});
