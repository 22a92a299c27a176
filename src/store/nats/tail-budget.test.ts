// The recent events a cluster node keeps in memory are bounded for the node, not only for each log: a tenant
// may hold hundreds of sessions open, each log's tail up to 16 MiB. Past the node's budget the largest tails are
// let go, and what they held is read from NATS, every event once and in order.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { NewEvent, SessionEvent } from "../../protocol/events.js";
import { type NatsCluster, startNatsCluster } from "../../testing/nats-cluster.js";
import { startStoreNode, type TestNode } from "../../testing/nats-store.js";
import type { NatsEventLog } from "./event-log.js";
import { NatsSessionStore } from "./session-store.js";

const MiB = 1024 * 1024;
const prompt = (text: string): NewEvent => ({ type: "user.prompt", turn: "t1", data: { text } }) as NewEvent;
const tailOf = (log: NatsEventLog) => (log as unknown as { tail: { events: SessionEvent[] } }).tail.events;
const bytesOf = (events: SessionEvent[]) => events.reduce((n, e) => n + JSON.stringify(e).length, 0);

let cluster: NatsCluster;
let node: TestNode;
beforeAll(async () => {
  cluster = await startNatsCluster({ nodes: 1 });
  node = await startStoreNode(cluster, "node-a", { prefix: "tails", replicas: 1 });
}, 120_000);
afterAll(async () => {
  await node?.close();
  await cluster?.stop();
});

describe("the tails of a node's open logs", () => {
  it("stay within the node's budget between them, and what was let go is read from NATS", async () => {
    const home = await mkdtemp(path.join(tmpdir(), "brain-tails-"));
    const store = new NatsSessionStore(node.ctx, {
      home,
      holder: { node: "node-a" },
      tailBudgetBytes: 2 * MiB,
    });
    try {
      const logs: NatsEventLog[] = [];
      for (let i = 0; i < 4; i++) {
        await store.create({ harness: "process", config: { model: "m1" }, id: `tail${i}` });
        logs.push(await store.openLog(`tail${i}`));
      }
      // 1 MiB a session, well within each log's own bound: 4 MiB together, twice the node's budget.
      for (const [i, log] of logs.entries()) {
        for (let j = 0; j < 4; j++) await log.append([prompt(`${i}.${j}:`.padEnd(256 * 1024, "p"))]);
      }
      expect(logs.reduce((n, log) => n + bytesOf(tailOf(log)), 0)).toBeLessThanOrEqual(2 * MiB);
      for (const [i, log] of logs.entries()) {
        const texts = (await log.read(0)).map((e) => (e.data as { text: string }).text.split(":")[0]);
        expect(texts).toEqual(["0", "1", "2", "3"].map((j) => `${i}.${j}`));
        expect((await log.read(2, 1)).map((e) => e.seq)).toEqual([3]);
      }
      for (const log of logs) await log.close();
    } finally {
      await store.close();
      await rm(home, { recursive: true, force: true });
    }
  }, 60_000);
});
