// Seeds the ACP presets whose agents load a session from their own files (a handoff or rebuild): claude-agent-acp
// resumes a Claude Code transcript under its CLAUDE_CONFIG_DIR, codex-acp a Codex rollout under its CODEX_HOME.
// Each is written by its CLI family's seeder into the preset's home, and acp.json names the session, so the
// harness's next start calls session/load on it. gemini-cli is not seeded: see the descriptor.
import type { SeedInput } from "../../core/seed-messages.js";
import { seedClaudeCode } from "../claude-code/seed.js";
import { seedCodex } from "../codex/seed.js";
import { STATE_FILE } from "./harness.js";
import { CLAUDE_DIR, CODEX_DIR } from "./presets.js";

/** Claude Code's seeder already names its session `session_id`, as acp.json does. */
export const seedAcpClaude = (input: SeedInput) => seedClaudeCode(input, CLAUDE_DIR, STATE_FILE);

export const seedAcpCodex = (input: SeedInput) =>
  seedCodex(input, CODEX_DIR, STATE_FILE, (threadId) => ({ session_id: threadId }));
