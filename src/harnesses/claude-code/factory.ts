// The claude-code harness family: Claude Code (`claude`, npm @anthropic-ai/claude-code) driven headless.
import { type CliFamilyDescriptor, familyFactory } from "../cli/family.js";
import { ClaudeCodeHarness } from "./harness.js";

export const CLAUDE_CODE: CliFamilyDescriptor = {
  harness: "claude-code",
  program: "claude",
  npmPackage: "@anthropic-ai/claude-code",
  title: "Claude Code",
  steering: "queued",
  open: (opening) => ClaudeCodeHarness.open(opening),
};

export const ClaudeCodeFactory = familyFactory(CLAUDE_CODE);
