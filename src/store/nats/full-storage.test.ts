// A cluster store that NATS has no room left in answers as the embedded store does on a full disk: code
// insufficient_storage (a 507 to the client, not a 500), keeping NATS's own words and saying what they mean (the
// request was not taken, nothing acknowledged before is lost) and what to do. Both ways a real nats-server runs
// out: the events stream at its max_bytes (discard new), and the server's JetStream storage (max_file_store) full.
// A message larger than the events stream's own max_msg_size is the caller's (payload_too_large, 413), as the
// embedded store's frame cap is: it names the size, the stream's limit, and what to do. A batch of events that
// each fit is cut into messages under that limit, known at the open and again once the stream refused one.
import { DiscardPolicy } from "@nats-io/jetstream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BrainError } from "../../core/errors.js";
import type { NewEvent } from "../../protocol/events.js";
import { toApiError } from "../../server/errors.js";
import { type NatsCluster, startNatsCluster } from "../../testing/nats-cluster.js";
import { startStoreNode, type TestNode } from "../../testing/nats-store.js";

const delta = (text: string): NewEvent =>
  ({ type: "assistant.delta", turn: "t1", data: { text } }) as NewEvent;

/** Appends 10 KB events to `log` until one is refused; the refusal, and the seqs stored before it. */
async function fill(log: { append(events: NewEvent[]): Promise<{ seq: number }[]> }, most: number) {
  const stored: number[] = [];
  for (let i = 0; i < most; i++) {
    const refused = await log.append([delta("z".repeat(10_000))]).then(
      ([e]) => {
        stored.push(e!.seq);
        return undefined;
      },
      (err: unknown) => err,
    );
    if (refused) return { refused, stored };
  }
  return { refused: undefined, stored };
}

function expectFull(refused: unknown, nats: RegExp): void {
  expect(refused).toBeInstanceOf(BrainError);
  expect((refused as BrainError).code).toBe("insufficient_storage");
  expect(toApiError(refused).status).toBe(507);
  expect((refused as Error).message).toMatch(nats);
  expect((refused as Error).message).toMatch(
    /this request was not taken, and nothing the session acknowledged before it is lost/,
  );
}

describe("a cluster log whose events stream is at its max_bytes", () => {
  let cluster: NatsCluster;
  let node: TestNode;
  beforeAll(async () => {
    cluster = await startNatsCluster({ nodes: 1 });
    node = await startStoreNode(cluster, "node-a", { prefix: "bytes", replicas: 1, publishRetryMs: 3000 });
  }, 120_000);
  afterAll(async () => {
    await node?.close();
    await cluster?.stop();
  });

  it("refuses the append as insufficient_storage, and goes on once the limit is raised", async () => {
    const { ctx, store } = node;
    const config = (await ctx.jsm.streams.info(ctx.stream)).config;
    await ctx.jsm.streams.update(ctx.stream, { ...config, max_bytes: 64 * 1024, discard: DiscardPolicy.New });
    await store.create({ harness: "process", config: { model: "m1" }, id: "b1" });
    const log = await store.openLog("b1");
    const { refused, stored } = await fill(log, 100);
    expectFull(refused, /refused by the events stream .*: NATS: maximum bytes exceeded/);

    await ctx.jsm.streams.update(ctx.stream, { ...config, max_bytes: -1 });
    const [next] = await log.append([delta("after")]);
    expect((await store.readEvents("b1")).map((e) => e.seq)).toEqual([...stored, next!.seq]);
    await log.close();
  }, 60_000);
});

describe("a cluster log on a NATS server whose JetStream storage is full", () => {
  let cluster: NatsCluster;
  let node: TestNode;
  beforeAll(async () => {
    cluster = await startNatsCluster({ nodes: 1, maxFileStore: "2MB" });
    node = await startStoreNode(cluster, "node-a", { prefix: "disk", replicas: 1, publishRetryMs: 3000 });
  }, 120_000);
  afterAll(async () => {
    await node?.close();
    await cluster?.stop();
  });

  it("refuses the append as insufficient_storage, keeping what was acknowledged before", async () => {
    const { store } = node;
    await store.create({ harness: "process", config: { model: "m1" }, id: "d1" });
    const log = await store.openLog("d1");
    const { refused, stored } = await fill(log, 400);
    expect(stored.length).toBeGreaterThan(0);
    expectFull(refused, /NATS: .*(insufficient resources|resource limits exceeded)/);
    expect((await store.readEvents("d1")).map((e) => e.seq)).toEqual(stored);
    await log.close();
  }, 60_000);
});

describe("a cluster log whose events stream takes small messages (max_msg_size)", () => {
  let cluster: NatsCluster;
  let node: TestNode;
  beforeAll(async () => {
    cluster = await startNatsCluster({ nodes: 1 });
    node = await startStoreNode(cluster, "node-a", { prefix: "msgsize", replicas: 1, publishRetryMs: 3000 });
  }, 120_000);
  afterAll(async () => {
    await node?.close();
    await cluster?.stop();
  });

  it("refuses an event over it as payload_too_large, naming the limit and the size, and goes on", async () => {
    const { ctx, store } = node;
    const config = (await ctx.jsm.streams.info(ctx.stream)).config;
    await ctx.jsm.streams.update(ctx.stream, { ...config, max_msg_size: 16 * 1024 });
    await store.create({ harness: "process", config: { model: "m1" }, id: "m1" });
    const log = await store.openLog("m1");
    const [first] = await log.append([delta("small")]);

    const refused = await log.append([delta("z".repeat(20_000))]).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(BrainError);
    expect((refused as BrainError).code).toBe("payload_too_large");
    expect(toApiError(refused).status).toBe(413);
    const message = (refused as Error).message;
    expect(message).toMatch(/append of seq 2-2 is 2\d{4} bytes/);
    expect(message).toContain(`up to ${16 * 1024} bytes a message (its max_msg_size)`);
    expect(message).toMatch(/this request was not taken.*send less.*or raise the stream's max_msg_size/);

    const [next] = await log.append([delta("after")]);
    expect((await store.readEvents("m1")).map((e) => e.seq)).toEqual([first!.seq, next!.seq]);
    await log.close();
  }, 60_000);

  /** One tick of runner deltas: 100 appends of 1 KiB each, made at once. */
  async function tick({ store }: TestNode, session: string) {
    const log = await store.openLog(session);
    const appends = Array.from({ length: 100 }, (_, i) => log.append([delta(`${i}:${"d".repeat(1024)}`)]));
    const seqs = (await Promise.all(appends)).map(([e]) => e!.seq);
    expect(seqs).toEqual(Array.from({ length: 100 }, (_, i) => seqs[0]! + i));
    await log.close();
    const read = (await store.readEvents(session)).filter((e) => e.type === "assistant.delta").slice(-100);
    expect(read.map((e) => [e.seq, (e.data as { text: string }).text.split(":")[0]])).toEqual(
      seqs.map((seq, i) => [seq, String(i)]),
    );
  }

  it("cuts a batch of events that each fit into messages under it, learnt from a refusal", async () => {
    // The stream was lowered to 16 KiB after the store opened (above); its refusal taught the log the limit.
    await tick(node, "m1");
  }, 60_000);

  it("takes the first batch over a limit an operator lowered while the log was open, cut under the new limit", async () => {
    // Its own stream, with no max_msg_size when the log opens: the batch is cut under the server's max_payload.
    const lowered = await startStoreNode(cluster, "node-b", {
      prefix: "lowered",
      replicas: 1,
      publishRetryMs: 3000,
    });
    try {
      const { ctx, store } = lowered;
      await store.create({ harness: "process", config: { model: "m3" }, id: "m3" });
      const log = await store.openLog("m3");
      await log.append([delta("before")]);
      const config = (await ctx.jsm.streams.info(ctx.stream)).config;
      await ctx.jsm.streams.update(ctx.stream, { ...config, max_msg_size: 16 * 1024 });
      // 100 appends of 1 KiB at once, held open: their batch (about 100 KiB) was cut for the old limit.
      const appends = Array.from({ length: 100 }, (_, i) => log.append([delta(`${i}:${"d".repeat(1024)}`)]));
      const seqs = (await Promise.all(appends)).map(([e]) => e!.seq);
      expect(seqs).toEqual(Array.from({ length: 100 }, (_, i) => 2 + i));
      await log.close();
      const read = (await store.readEvents("m3")).map((e) => (e.data as { text: string }).text.split(":")[0]);
      expect(read).toEqual(["before", ...seqs.map((_, i) => String(i))]);
    } finally {
      await lowered.close();
    }
  }, 60_000);

  it("cuts a batch of events that each fit into messages under it, read when the store opens", async () => {
    const other = await startStoreNode(cluster, "node-a", {
      prefix: "msgsize",
      replicas: 1,
      publishRetryMs: 3000,
    });
    try {
      await other.store.create({ harness: "process", config: { model: "m2" }, id: "m2" });
      await tick(other, "m2");
    } finally {
      await other.close();
    }
  }, 60_000);
});
