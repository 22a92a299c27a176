// What the shared CLI-family checks (src/testing/cli-family.ts) need to know of the Claude Code CLI: one case for the
// tests on this host and in the docker sandbox (src/harnesses/sandbox), which change only the factory and skips.
import { expect } from "vitest";
import { FAKE_KEY } from "../../../testing/cli.js";
import type { CliFamilyCase } from "../../../testing/cli-family.js";
import { ClaudeCodeFactory } from "../factory.js";

export const claudeCodeCase: CliFamilyCase = {
  harness: "claude-code",
  program: "claude",
  npmPackage: "@anthropic-ai/claude-code",
  factory: (options) => new ClaudeCodeFactory(options),
  shellCall: { name: "Bash", arguments: { command: "ls -1" } },
  lastMessage: { stop_reason: "end_turn" },
  keyHeader: ["x-api-key", FAKE_KEY],
  resumedToolResult: "tool_result",
  appendOnly: true,
  checkpointFiles: (files) => {
    expect(files.map((f) => f.path)).toContain("claude-code.json");
    expect(files.some((f) => f.path.endsWith(".jsonl") && f.append_only)).toBe(true);
  },
  shellTool: "Bash",
  bound: { echo: "mcp__brain__echo", shell: { name: "Bash", arguments: { command: "touch shell.txt" } } },
};
