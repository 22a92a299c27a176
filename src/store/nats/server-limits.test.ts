// What NATS will not take, by an operator's settings. A server may carry less than the 1 MB a message it takes by
// default (max_payload): the cluster log cuts its messages to what the server carries, and refuses at once, naming
// the server's limit, an event that cannot fit (a message past it is refused by the client at every try). The
// events stream may have limits (max_bytes with discard new): a publish it refuses for them fails at once, naming
// the stream, instead of being asked again for the whole retry budget (an append stored in an earlier message of
// the batch succeeds); messages the stream let go for its limits
// move the log's first seq, so watchers are told of the range dropped; a log the stream let go of whole goes on
// past the seqs it used (./seq-mark.ts) rather than at 1 again. A server that is not clustered is refused
// at once, saying what to run instead; one without JetStream within seconds, naming it and the fix.
import { spawn } from "node:child_process";
import { DiscardPolicy } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { BrainError } from "../../core/errors.js";
import { freePort } from "../../core/free-port.js";
import type { NewEvent, SessionEvent } from "../../protocol/events.js";
import { type NatsCluster, natsServerPath, startNatsCluster } from "../../testing/nats-cluster.js";
import { startStoreNode, type TestNode } from "../../testing/nats-store.js";
import { NatsConfigError, openNatsContext } from "./context.js";
import { NatsStoreError } from "./errors.js";
import { readMark, writeMark } from "./seq-mark.js";

const MAX_PAYLOAD = 256 * 1024;
const delta = (text: string): NewEvent =>
  ({ type: "assistant.delta", turn: "t1", data: { text } }) as NewEvent;
const text = (e: SessionEvent) => (e.data as { text: string }).text;

let cluster: NatsCluster;
let node: TestNode;
let full: TestNode;
beforeAll(async () => {
  cluster = await startNatsCluster({ nodes: 1, maxPayload: MAX_PAYLOAD });
  node = await startStoreNode(cluster, "node-a", { prefix: "small", replicas: 1, publishRetryMs: 2000 });
  full = await startStoreNode(cluster, "node-a", { prefix: "full", replicas: 1, publishRetryMs: 3000 });
}, 120_000);
afterAll(async () => {
  await node?.close();
  await full?.close();
  await cluster?.stop();
});

describe("a cluster log on a NATS server that carries 256 KiB a message", () => {
  it("stores a batch larger than that in several messages, and refuses an event larger than that, naming the server's limit", async () => {
    await node.store.create({ harness: "process", config: { model: "m1" }, id: "p1" });
    const log = await node.store.openLog("p1");
    // One tick's deltas: each small, together past the server's limit (they would have been one message).
    const batch = Array.from({ length: 10 }, (_, i) => delta(`${i}`.padEnd(50_000, "x")));
    expect((await log.append(batch)).map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);

    const refused = await log.append([delta("y".repeat(300_000))]).catch((err: BrainError) => err);
    expect(refused).toBeInstanceOf(BrainError);
    expect((refused as BrainError).code).toBe("payload_too_large");
    expect((refused as BrainError).message).toMatch(/event 11 \(assistant\.delta\) is \d+ bytes/);
    expect((refused as BrainError).message).toContain(
      `messages of up to ${MAX_PAYLOAD} bytes (its max_payload)`,
    );

    expect((await log.append([delta("after")]))[0]!.seq).toBe(11);
    const stored = await node.store.readEvents("p1");
    expect(stored.map((e) => e.seq)).toEqual(Array.from({ length: 11 }, (_, i) => i + 1));
    expect(stored.map((e) => text(e).slice(0, 5))).toEqual([
      ...batch.map((e) => text(e as SessionEvent).slice(0, 5)),
      "after",
    ]);
    await log.close();
  }, 60_000);
});

describe("a cluster log whose events stream is past its limits", () => {
  it("fails the append refused for them at once, naming the stream, and goes on once the limits are raised", async () => {
    const { ctx, store } = full;
    const config = (await ctx.jsm.streams.info(ctx.stream)).config;
    await ctx.jsm.streams.update(ctx.stream, { ...config, max_bytes: 64 * 1024, discard: DiscardPolicy.New });
    await store.create({ harness: "process", config: { model: "m1" }, id: "f1" });
    const log = await store.openLog("f1");
    let refused: BrainError | undefined;
    const stored: number[] = [];
    while (!refused && stored.length < 100) {
      await log.append([delta("z".repeat(10_000))]).then(
        ([e]) => stored.push(e!.seq),
        (err: BrainError) => {
          refused = err;
        },
      );
    }
    expect(refused).toBeInstanceOf(BrainError);
    // Not asked again until the retry budget is spent ("append failed after N tries"): refused, naming the stream.
    expect(refused!.message).toContain(`refused by the events stream ${ctx.stream}`);
    expect(refused!.message).toMatch(
      /raise the stream's limits or free its storage: NATS: maximum bytes exceeded/,
    );

    await ctx.jsm.streams.update(ctx.stream, { ...config, max_bytes: -1 });
    const [next] = await log.append([delta("after")]);
    expect(next!.seq).toBe(stored.length + 1);
    expect((await store.readEvents("f1")).map((e) => e.seq)).toEqual([...stored, next!.seq]);
    await log.close();
  }, 60_000);
});

describe("a batch cut in two messages whose second the events stream refuses for its limits", () => {
  it("acknowledges the append stored in the first, and fails only the other", async () => {
    const { ctx, store } = full;
    await store.create({ harness: "process", config: { model: "m1" }, id: "split1" });
    const log = await store.openLog("split1");
    const info = await ctx.jsm.streams.info(ctx.stream);
    // Room for one message of about 200 KB, not two.
    const max_bytes = info.state.bytes + 300_000;
    await ctx.jsm.streams.update(ctx.stream, { ...info.config, max_bytes, discard: DiscardPolicy.New });
    try {
      // One tick's appends: one batch, past the 256 KiB a message carries, so two messages.
      const [first, second] = await Promise.allSettled([
        log.append([delta("a".repeat(200_000))]),
        log.append([delta("b".repeat(200_000))]),
      ]);
      // Stored and delivered to watchers: failed, it would be sent again and logged twice.
      expect(first.status === "fulfilled" && first.value.map((e) => e.seq)).toEqual([1]);
      expect(second.status === "rejected" && (second.reason as Error).message).toMatch(
        /refused by the events stream/,
      );
      expect((await store.readEvents("split1")).map((e) => [e.seq, text(e).slice(0, 3)])).toEqual([
        [1, "aaa"],
      ]);
    } finally {
      await ctx.jsm.streams.update(ctx.stream, info.config);
      await log.close();
    }
  });
});

describe("one append cut in two messages whose second the events stream refuses for its limits", () => {
  it("is rejected whole: no reader, watcher or later opener sees its first part, and the next append takes its seqs", async () => {
    const { ctx, store } = full;
    const info = await ctx.jsm.streams.info(ctx.stream);
    const refuseSecond = (bytes: number) =>
      ctx.jsm.streams.update(ctx.stream, {
        ...info.config,
        max_bytes: bytes + 300_000,
        discard: DiscardPolicy.New,
      });
    const half = [delta("a".repeat(200_000)), delta("b".repeat(200_000))];
    for (const id of ["split2", "split3"]) {
      await store.create({ harness: "process", config: { model: "m1" }, id });
    }
    const log = await store.openLog("split2");
    const delivered: number[] = [];
    log.subscribe((events) => delivered.push(...events.map((e) => e.seq)));
    const followed: string[] = [];
    const stop = await store.follow("split2", 0, (events) => {
      followed.push(...events.map((e) => `${e.seq}:${text(e).slice(0, 3)}`));
    });
    await refuseSecond((await ctx.jsm.streams.info(ctx.stream)).state.bytes);
    try {
      const refused = await log.append(half).catch((err: Error) => err);
      expect((refused as Error).message).toMatch(/refused by the events stream/);
      expect((await store.readEvents("split2")).map((e) => e.seq)).toEqual([]);
      expect(await store.lastSeq("split2")).toBe(0);
      expect(log.lastSeq).toBe(0);
    } finally {
      await ctx.jsm.streams.update(ctx.stream, info.config);
    }
    // The writer goes on over the seqs the failed append took.
    expect((await log.append([delta("after")])).map((e) => e.seq)).toEqual([1]);
    expect((await store.readEvents("split2")).map((e) => [e.seq, text(e)])).toEqual([[1, "after"]]);
    expect(delivered).toEqual([1]);
    await vi.waitFor(() => expect(followed).toEqual(["1:aft"]));
    stop();
    await log.close();

    // A writer that stopped there: the next one to open the log does not take the part stored for an append.
    const first = await store.openLog("split3");
    await refuseSecond((await ctx.jsm.streams.info(ctx.stream)).state.bytes);
    try {
      await expect(first.append(half)).rejects.toThrow(/refused by the events stream/);
    } finally {
      await ctx.jsm.streams.update(ctx.stream, info.config);
    }
    await first.close();
    const next = await store.openLog("split3");
    expect(next.lastSeq).toBe(0);
    expect((await next.read(0)).map((e) => e.seq)).toEqual([]);
    expect((await next.append([delta("after")])).map((e) => e.seq)).toEqual([1]);
    expect((await store.readEvents("split3")).map((e) => [e.seq, text(e)])).toEqual([[1, "after"]]);
    expect(await store.readEvents("split3", { after: 0, limit: 10 })).toHaveLength(1);
    await next.close();
  });
});

describe("a cluster log whose oldest messages the events stream let go (an operator's max_msgs)", () => {
  it("says its first seq is the first one left, so watchers before it are told of the dropped range", async () => {
    const { ctx, store } = full;
    await store.create({ harness: "process", config: { model: "m1" }, id: "old1" });
    const log = await store.openLog("old1");
    for (let i = 1; i <= 6; i++) await log.append([delta(`${i}`)]);
    expect(await store.firstSeq("old1")).toBe(1);
    const config = (await ctx.jsm.streams.info(ctx.stream)).config;
    await ctx.jsm.streams.update(ctx.stream, { ...config, max_msgs: 3, discard: DiscardPolicy.Old });
    try {
      expect((await store.readEvents("old1")).map((e) => e.seq)).toEqual([4, 5, 6]);
      expect(await store.firstSeq("old1")).toBe(4);
    } finally {
      await ctx.jsm.streams.update(ctx.stream, { ...config, max_msgs: -1 });
      await log.close();
    }
  });
});

describe("a cluster log whose every message the events stream let go (an operator's max_msgs)", () => {
  it("goes on past the seqs it used, and says the range before it is gone", async () => {
    const { ctx, store } = full;
    const base = { harness: "process", config: { model: "m1" } };
    await store.create({ ...base, id: "gone1" });
    const log = await store.openLog("gone1");
    for (let i = 1; i <= 3; i++) await log.append([delta(`${i}`)]);
    await log.close();
    await store.create({ ...base, id: "other1" });
    const other = await store.openLog("other1");
    await other.append([delta("other")]);
    await other.close();
    const config = (await ctx.jsm.streams.info(ctx.stream)).config;
    // One message kept: other1's, the newest. Nothing of gone1 is left.
    await ctx.jsm.streams.update(ctx.stream, { ...config, max_msgs: 1, discard: DiscardPolicy.Old });
    try {
      expect(await store.readEvents("gone1")).toEqual([]);
      const first = await store.firstSeq("gone1");
      expect(first).toBeGreaterThan(3);
      expect(await store.lastSeq("gone1")).toBe(first - 1);
      const again = await store.openLog("gone1");
      expect(again.firstSeq).toBe(first);
      const [next] = await again.append([delta("after")]);
      // Not seq 1 again: a watcher whose cursor is 3 would take it for one it has seen.
      expect(next!.seq).toBe(first);
      expect((await store.readEvents("gone1")).map((e) => [e.seq, text(e)])).toEqual([[first, "after"]]);
      await again.close();
    } finally {
      await ctx.jsm.streams.update(ctx.stream, { ...config, max_msgs: -1 });
    }
  });
});

describe("the seqs a cluster log reserves beside its record", () => {
  it("are never lowered by a stale writer's reservation landing last", async () => {
    const { records } = full.ctx;
    expect(await writeMark(records, "mark1", "i1", 9000)).toBe(9000);
    expect(await writeMark(records, "mark1", "i1", 5000)).toBe(9000);
    expect(await readMark(records, "mark1", "i1")).toBe(9000);
    // The session made again with its id (another incarnation) reserves its own.
    expect(await writeMark(records, "mark1", "i2", 10)).toBe(10);
  });
});

describe("a NATS server that is not clustered", () => {
  it("is refused at once with what to run instead: the cluster store keeps 3 replicas", async () => {
    // A second is long enough for an answer: without one the setup asks again for a minute.
    const refused = await openNatsContext(node.nc, { prefix: "single" }, 1000).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(NatsConfigError);
    expect((refused as Error).message).toMatch(
      /the NATS server is not part of a cluster, and cluster mode keeps 3 replicas .*: run nats-server as a cluster of 3 nodes with JetStream/,
    );
  });
});

describe("a NATS server without JetStream", () => {
  it("is refused within seconds, naming the server and how to start it, not after the whole setup time", async () => {
    const port = await freePort();
    const server = spawn(natsServerPath(), ["-a", "127.0.0.1", "-p", String(port)], { stdio: "ignore" });
    try {
      const nc = await connect({ servers: `nats://127.0.0.1:${port}`, waitOnFirstConnect: true });
      try {
        const refused = await openNatsContext(nc, { replicas: 1 }, 60_000).catch((err: unknown) => err);
        expect(refused).toBeInstanceOf(NatsStoreError);
        expect((refused as Error).message).toMatch(
          new RegExp(`the NATS server at 127\\.0\\.0\\.1:${port} does not run JetStream.*-js`),
        );
      } finally {
        await nc.close();
      }
    } finally {
      server.kill("SIGKILL");
    }
  }, 90_000);
});
