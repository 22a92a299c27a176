// The cluster store against the contract every session store passes (src/testing/store-suite.ts), on a
// 3-node NATS cluster with R3 streams. Each test gets its own stream and buckets (a fresh prefix).
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll } from "vitest";
import { type NatsCluster, startNatsCluster } from "../../testing/nats-cluster.js";
import { storeSuite } from "../../testing/store-suite.js";
import { openNatsContext } from "./context.js";
import { NatsSessionStore } from "./session-store.js";

let cluster: NatsCluster;
let n = 0;

beforeAll(async () => {
  cluster = await startNatsCluster();
}, 120_000);
afterAll(async () => {
  await cluster?.stop();
});

storeSuite("NatsSessionStore", async () => {
  const home = await mkdtemp(path.join(tmpdir(), "brain-node-"));
  const nc = await cluster.connect();
  const ctx = await openNatsContext(nc, { prefix: `suite${++n}` });
  return {
    store: new NatsSessionStore(ctx, { home, holder: { node: "node-a" } }),
    cleanup: async () => {
      await nc.close();
      await rm(home, { recursive: true, force: true });
    },
  };
});
