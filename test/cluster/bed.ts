// What the cluster end-to-end tests share: a 3-node NATS cluster (R3) and three Brain nodes (`brain serve --nats`,
// each in its own temp dir) with a short lease, started once per test file and stopped after it; and a wait for
// what a cluster does eventually (a lease expiring, another node taking over).
import { afterAll, beforeAll } from "vitest";
import { type BrainNode, startBrainNode } from "../../src/testing/brain-node.js";
import { type NatsCluster, startNatsCluster } from "../../src/testing/nats-cluster.js";

/** The lease's time to live: short, so takeovers happen within a test. */
export const TTL = 2000;

/** The three nodes, once started (beforeAll), and the NATS cluster they share (a test's own connections). */
export function useBrainCluster(): { nodes: [BrainNode, BrainNode, BrainNode]; nats: NatsCluster } {
  let cluster: NatsCluster | undefined;
  const bed = { nodes: [] as BrainNode[], nats: undefined as NatsCluster | undefined };
  beforeAll(async () => {
    cluster = await startNatsCluster();
    bed.nats = cluster;
    const servers = cluster.servers;
    const started = await Promise.allSettled(
      ["a", "b", "c"].map((n) => startBrainNode(`node-${n}`, servers, { leaseTtlMs: TTL })),
    );
    bed.nodes = started.flatMap((s) => (s.status === "fulfilled" ? [s.value] : []));
    // One that failed leaves the others running: afterAll stops those, and the suite fails with its reason.
    const failed = started.find((s) => s.status === "rejected");
    if (failed) throw failed.reason;
  }, 180_000);
  afterAll(async () => {
    await Promise.allSettled(bed.nodes.map((n) => n.stop()));
    await cluster?.stop();
  });
  return bed as { nodes: [BrainNode, BrainNode, BrainNode]; nats: NatsCluster };
}

/** `fn`'s first defined answer, asked every 100 ms for up to `ms`; the timeout names `what` and the last error. */
export async function waitFor<T>(what: string, fn: () => Promise<T | undefined>, ms = 60_000): Promise<T> {
  const deadline = Date.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      const value = await fn();
      if (value !== undefined) return value;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${String(last)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
