// The opencode family's catalog entry.
import { cliFamily } from "../cli/descriptor.js";
import type { SeedInput } from "../family.js";
import { OPENCODE } from "./factory.js";

export const opencodeFamily = {
  ...cliFamily(OPENCODE, "opencode through opencode serve"),
  // An export the harness imports before the server starts (a handoff or `brain sessions rebuild`).
  seed: async (input: SeedInput) => {
    const [{ seedOpencode }, { STATE_FILE, EXPORT_FILE }] = await Promise.all([
      import("./seed.js"),
      import("./harness.js"),
    ]);
    return seedOpencode(input, STATE_FILE, EXPORT_FILE);
  },
};
