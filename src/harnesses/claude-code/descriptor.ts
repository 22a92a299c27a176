// The claude-code family's catalog entry.
import { cliFamily } from "../cli/descriptor.js";
import type { SeedInput } from "../family.js";
import { CLAUDE_CODE } from "./factory.js";

export const claudeCodeFamily = {
  ...cliFamily(CLAUDE_CODE, "Claude Code (claude) driven headless"),
  // A project transcript Claude resumes as its own (a handoff or `brain sessions rebuild`).
  seed: async (input: SeedInput) => {
    const [{ seedClaudeCode }, { CONFIG_DIR, STATE_FILE }] = await Promise.all([
      import("./seed.js"),
      import("./harness.js"),
    ]);
    return seedClaudeCode(input, CONFIG_DIR, STATE_FILE);
  },
};
