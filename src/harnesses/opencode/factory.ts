// The opencode harness family: opencode (`opencode`, npm opencode-ai) driven through `opencode serve`.
import { type CliFamilyDescriptor, familyFactory } from "../cli/family.js";

export const OPENCODE: CliFamilyDescriptor = {
  harness: "opencode",
  program: "opencode",
  npmPackage: "opencode-ai",
  title: "opencode",
  steering: "queued",
  bound: true,
  // Until the server answers its health check: its 185 MB binary can take long to start.
  timeouts: { startMs: 120_000 },
  // Imported when a session opens: listing or probing the family does not load its adapter.
  open: async (opening) => (await import("./harness.js")).OpencodeHarness.open(opening),
};

export const OpencodeFactory = familyFactory(OPENCODE);
