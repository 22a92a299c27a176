// The claude-code harness family: Claude Code (`claude`, npm @anthropic-ai/claude-code) driven headless.
import { type CliFamilyDescriptor, familyFactory } from "../cli/family.js";

export const CLAUDE_CODE: CliFamilyDescriptor = {
  harness: "claude-code",
  program: "claude",
  npmPackage: "@anthropic-ai/claude-code",
  title: "Claude Code",
  steering: "queued",
  bound: true,
  // Imported when a session opens: listing or probing the family does not load its adapter.
  open: async (opening) => (await import("./harness.js")).ClaudeCodeHarness.open(opening),
};

export const ClaudeCodeFactory = familyFactory(CLAUDE_CODE);
