// The NATS test bed of a test file: one cluster for the file's tests, and pairs of store nodes that are closed
// after the test that opened them (kept apart from nats-store.ts, which the benchmarks load outside vitest).
import { afterAll, afterEach, beforeAll } from "vitest";
import type { NatsStoreConfig } from "../store/nats/context.js";
import { type NatsCluster, startNatsCluster } from "./nats-cluster.js";
import { startStoreNode, type TestNode } from "./nats-store.js";

export interface NatsBed {
  /** The file's cluster, started once before its tests. */
  readonly cluster: NatsCluster;
  /** A prefix no other test of the file uses (its own stream and buckets). */
  prefix(name: string): string;
  /** node-a and node-b on one fresh prefix, closed after the test. */
  twoNodes(
    name: string,
    config?: Omit<NatsStoreConfig, "prefix"> & { leases?: boolean },
  ): Promise<[TestNode, TestNode]>;
}

/**
 * A test NATS cluster for the calling test file (of `nodes` nodes, 3 unless given): started before its tests,
 * stopped after them.
 */
export function useNatsCluster(options: { nodes?: number } = {}): NatsBed {
  let cluster: NatsCluster | undefined;
  let nodes: TestNode[] = [];
  let n = 0;
  beforeAll(async () => {
    cluster = await startNatsCluster(options);
  }, 120_000);
  afterAll(async () => {
    await cluster?.stop();
  });
  afterEach(async () => {
    await Promise.all(nodes.map((node) => node.close()));
    nodes = [];
  });
  const bed: NatsBed = {
    get cluster() {
      if (!cluster) throw new Error("the NATS cluster is not started yet (use it inside a test)");
      return cluster;
    },
    prefix: (name) => `${name}${++n}`,
    async twoNodes(name, config = {}) {
      const prefix = bed.prefix(name);
      const a = await startStoreNode(bed.cluster, "node-a", { ...config, prefix });
      const b = await startStoreNode(bed.cluster, "node-b", { ...config, prefix });
      nodes.push(a, b);
      return [a, b];
    },
  };
  return bed;
}
