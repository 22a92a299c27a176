// The embedded store against the contract every session store passes (src/testing/store-suite.ts).
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { storeSuite } from "../../testing/store-suite.js";
import { FsSessionStore } from "./session-store.js";

storeSuite("FsSessionStore", async () => {
  const home = await mkdtemp(path.join(tmpdir(), "brain-home-"));
  return {
    store: new FsSessionStore(home),
    cleanup: () => rm(home, { recursive: true, force: true }),
  };
});
