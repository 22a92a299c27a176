// The claude-code family's catalog entry.
import { cliFamily } from "../cli/descriptor.js";
import { CLAUDE_CODE } from "./factory.js";

export const claudeCodeFamily = cliFamily(CLAUDE_CODE, "Claude Code (claude) driven headless");
