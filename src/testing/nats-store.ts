// Cluster-store nodes for tests: each a NatsSessionStore with its own home and connection, sharing one prefix
// (one stream and set of buckets) on a test NATS cluster, as Brain nodes on several machines would.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { NatsConnection } from "@nats-io/transport-node";
import { type NatsContext, type NatsStoreConfig, openNatsContext } from "../store/nats/context.js";
import { NatsSessionStore } from "../store/nats/session-store.js";
import type { NatsCluster } from "./nats-cluster.js";

export interface TestNode {
  store: NatsSessionStore;
  ctx: NatsContext;
  nc: NatsConnection;
  home: string;
  close(): Promise<void>;
}

export async function startStoreNode(
  cluster: NatsCluster,
  node: string,
  config: NatsStoreConfig & { leases?: boolean; warn?: (message: string) => void },
): Promise<TestNode> {
  const home = await mkdtemp(path.join(tmpdir(), `brain-${node}-`));
  const nc = await cluster.connect(node);
  const ctx = await openNatsContext(nc, config);
  const store = new NatsSessionStore(ctx, {
    home,
    holder: { node },
    ...(config.leases === false ? { leases: false } : {}),
    ...(config.warn ? { warn: config.warn } : {}),
  });
  return {
    store,
    ctx,
    nc,
    home,
    close: async () => {
      await store.close();
      await nc.close().catch(() => {});
      await rm(home, { recursive: true, force: true });
    },
  };
}
