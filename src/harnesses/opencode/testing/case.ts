// What the shared CLI-family checks (src/testing/cli-family.ts) need to know of opencode: one case for the tests on
// this host and in the docker sandbox (src/harnesses/sandbox), which change only the factory.
import { expect } from "vitest";
import type { CliFamilyCase } from "../../../testing/cli-family.js";
import { OpencodeFactory } from "../factory.js";

export const opencodeCase: CliFamilyCase = {
  harness: "opencode",
  program: "opencode",
  npmPackage: "opencode-ai",
  factory: (options) => new OpencodeFactory(options),
  provider: { path: "/v1", model: "fake-model" },
  shellCall: { name: "bash", arguments: { command: "ls -1" } },
  lastMessage: { stop_reason: "stop", usage: { input: expect.any(Number) } },
  resumedToolResult: '"role":"tool"',
  shellTool: "bash",
  bound: { echo: "brain_echo", shell: { name: "bash", arguments: { command: "touch shell.txt" } } },
  checkpointFiles: (files) => {
    expect(files.map((f) => f.path).sort()).toEqual(["opencode-session.json", "opencode-state.json"]);
  },
  // Covered by each test file's combined tests (one server start for several checks, opencode starts slowly);
  // opencode prints no JSON lines, and its fake CLIs live in a temp dir a container does not mount.
  skip: ["turn", "refused", "interrupt", "approvals", "restart", "garbage"],
};
