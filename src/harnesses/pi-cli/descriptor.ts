// The pi-cli family's catalog entry.
import { cliFamily } from "../cli/descriptor.js";
import { PI_CLI } from "./factory.js";

export const piCliFamily = {
  ...cliFamily(PI_CLI, "the pi coding agent's CLI (pi) in RPC mode"),
  // The session file pi resumes, in its own format (a handoff or `brain sessions rebuild`).
  seed: async (input: import("../family.js").SeedInput) => {
    const [{ seedPi }, { SESSIONS_DIR }] = await Promise.all([import("./seed.js"), import("./harness.js")]);
    return seedPi(input, SESSIONS_DIR);
  },
};
