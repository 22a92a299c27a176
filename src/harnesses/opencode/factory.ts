// The opencode harness family: opencode (`opencode`, npm opencode-ai) driven through `opencode serve`.
import { type CliFamilyDescriptor, familyFactory } from "../cli/family.js";
import { OpencodeHarness } from "./harness.js";

export const OPENCODE: CliFamilyDescriptor = {
  harness: "opencode",
  program: "opencode",
  npmPackage: "opencode-ai",
  title: "opencode",
  steering: "queued",
  // Until the server answers its health check: its 185 MB binary can take long to start.
  timeouts: { startMs: 120_000 },
  open: (opening) => OpencodeHarness.open(opening),
};

export const OpencodeFactory = familyFactory(OPENCODE);
