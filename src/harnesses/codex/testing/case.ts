// What the shared CLI-family checks (src/testing/cli-family.ts) need to know of the Codex CLI: one case for the
// tests on this host and in the docker sandbox (src/harnesses/sandbox), which change only the factory and skips.
import { expect } from "vitest";
import { FAKE_KEY } from "../../../testing/cli.js";
import type { CliFamilyCase } from "../../../testing/cli-family.js";
import { CodexFactory } from "../factory.js";

export const codexCase: CliFamilyCase = {
  harness: "codex",
  program: "codex",
  npmPackage: "@openai/codex",
  factory: (options) => new CodexFactory(options),
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
};
