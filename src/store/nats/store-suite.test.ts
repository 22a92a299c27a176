// The cluster store against the contract every session store passes (src/testing/store-suite.ts), on a
// 3-node NATS cluster with R3 streams. Each test gets its own stream and buckets (a fresh prefix).
import { useNatsCluster } from "../../testing/nats-bed.js";
import { startStoreNode } from "../../testing/nats-store.js";
import { storeSuite } from "../../testing/store-suite.js";

const nats = useNatsCluster();

storeSuite("NatsSessionStore", async () => {
  const node = await startStoreNode(nats.cluster, "node-a", { prefix: nats.prefix("suite") });
  return { store: node.store, cleanup: node.close };
});
