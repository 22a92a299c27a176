// What the shared CLI-family checks (src/testing/cli-family.ts) need to know of the pi CLI: one case for the
// tests on this host and in the docker sandbox (src/harnesses/sandbox), which change only the factory and skips.
import { expect } from "vitest";
import { FAKE_KEY } from "../../../testing/cli.js";
import type { CliFamilyCase } from "../../../testing/cli-family.js";
import { PiCliFactory } from "../factory.js";

export const piCliCase: CliFamilyCase = {
  harness: "pi-cli",
  program: "pi",
  npmPackage: "@mariozechner/pi-coding-agent",
  factory: (options) => new PiCliFactory(options),
  provider: { path: "/v1", model: "fake-model" },
  shellCall: { name: "bash", arguments: { command: "ls -1" } },
  lastMessage: { stop_reason: "stop", usage: { input: expect.any(Number) } },
  keyHeader: ["authorization", `Bearer ${FAKE_KEY}`],
  resumedToolResult: '"role":"tool"',
  appendOnly: true,
  checkpointFiles: (files) => {
    expect(files.some((f) => f.path.startsWith("pi/sessions/") && f.append_only)).toBe(true);
  },
  bound: { echo: "echo", shell: { name: "bash", arguments: { command: "touch shell.txt" } } },
};
