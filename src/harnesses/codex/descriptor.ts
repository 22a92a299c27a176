// The codex family's catalog entry.
import { cliFamily } from "../cli/descriptor.js";
import type { SeedInput } from "../family.js";
import { CODEX } from "./factory.js";

export const codexFamily = {
  ...cliFamily(CODEX, "the OpenAI Codex CLI (codex) through codex app-server"),
  // A rollout Codex resumes as its own thread (a handoff or `brain sessions rebuild`).
  seed: async (input: SeedInput) => {
    const [{ seedCodex }, { CODEX_HOME, STATE_FILE }] = await Promise.all([
      import("./seed.js"),
      import("./harness.js"),
    ]);
    return seedCodex(input, CODEX_HOME, STATE_FILE);
  },
};
