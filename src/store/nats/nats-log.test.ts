// What only the cluster store has: several nodes on one stream. A stale writer is fenced by the expected
// sequence, any node reads and follows any session's log, checkpoints made on one node restore on another,
// a NATS node killed mid-stream costs no acknowledged event and doubles none, and a publish that timed out but
// landed later never makes another append's acknowledgement a lie.
import { randomBytes } from "node:crypto";
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { connect } from "@nats-io/transport-node";
import { describe, expect, it } from "vitest";
import { BrainError } from "../../core/errors.js";
import type { NewEvent, SessionEvent } from "../../protocol/events.js";
import { useNatsCluster } from "../../testing/nats-bed.js";
import { type NatsCluster, startNatsCluster } from "../../testing/nats-cluster.js";
import { startNatsProxy } from "../../testing/nats-proxy.js";
import { startStoreNode, type TestNode } from "../../testing/nats-store.js";
import { ReplicatedCheckpoints } from "./checkpoints.js";
import { openNatsContext } from "./context.js";
import { NatsSessionStore } from "./session-store.js";

const base = { harness: "process", config: { model: "m1" } };
const delta = (text: string): NewEvent =>
  ({ type: "assistant.delta", turn: "t1", data: { text } }) as NewEvent;

/** The event a session logs once checkpoint `made` is taken. */
const logged = (made: { id: string }): NewEvent =>
  ({ type: "checkpoint.created", data: { id: made.id, files: [] } }) as NewEvent;

const nats = useNatsCluster();
const twoNodes = (leases = true) => nats.twoNodes("log", { leases });

async function until<T>(
  what: string,
  fn: () => T | undefined | Promise<T | undefined>,
  ms = 20_000,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await fn();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe("NATS event log across nodes", () => {
  it("fences a stale writer: its append after another writer's is refused, coded locked", async () => {
    const [a, b] = await twoNodes(false);
    await a.store.create({ ...base, id: "s1" });
    const stale = await a.store.openLog("s1");
    const fresh = await b.store.openLog("s1");
    await fresh.append([delta("from b")]);
    const refused = await stale.append([delta("from a")]).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(BrainError);
    expect((refused as BrainError).code).toBe("locked");
    expect((refused as BrainError).message).toMatch(/no longer owns/);
    // Once fenced it stays fenced: nothing it writes later can land after the other writer's events.
    expect(((await stale.append([delta("again")]).catch((e: BrainError) => e)) as BrainError).code).toBe(
      "locked",
    );
    await fresh.append([delta("b again")]);
    const events = await b.store.readEvents("s1");
    expect(events.map((e) => [e.seq, (e.data as { text: string }).text])).toEqual([
      [1, "from b"],
      [2, "b again"],
    ]);
  });

  it("reads from any seq on another node, and follows live from a cursor", async () => {
    const [a, b] = await twoNodes();
    await a.store.create({ ...base, id: "s2" });
    const log = await a.store.openLog("s2");
    for (let i = 0; i < 20; i++)
      await Promise.all([log.append([delta(`${i}a`)]), log.append([delta(`${i}b`)])]);
    for (const after of [0, 1, 2, 17, 39]) {
      const events = await b.store.readEvents("s2").then((all) => all.filter((e) => e.seq > after));
      expect(events.map((e) => e.seq)).toEqual(Array.from({ length: 40 - after }, (_, i) => after + i + 1));
    }
    const seen: SessionEvent[] = [];
    const stop = await b.store.follow("s2", 35, (events) => seen.push(...events));
    await until("the replay", () => (seen.length >= 5 ? true : undefined));
    await log.append([delta("live")]);
    await until("the live event", () => (seen.length >= 6 ? true : undefined));
    stop();
    expect(seen.map((e) => e.seq)).toEqual([36, 37, 38, 39, 40, 41]);
    await log.close();
    // A reopen reads from NATS (its memory of recent events is gone): the same answers.
    const again = await a.store.openLog("s2");
    expect((await again.read(30, 3)).map((e) => e.seq)).toEqual([31, 32, 33]);
    await again.close();
  });

  it("reads from any seq when other sessions' messages sit between a session's own", async () => {
    const [a, b] = await twoNodes();
    const ids = ["i1", "i2", "i3"];
    const logs = [];
    for (const id of ids) {
      await a.store.create({ ...base, id });
      logs.push(await a.store.openLog(id));
    }
    for (let i = 0; i < 25; i++) {
      for (const [k, log] of logs.entries()) {
        // Uneven: the sessions' messages interleave with gaps of every size.
        for (let j = 0; j <= (i + k) % 3; j++) await log.append([delta(`${i}.${j}`)]);
      }
    }
    for (const [k, id] of ids.entries()) {
      const all = await b.store.readEvents(id);
      const count = logs[k]!.lastSeq;
      expect(all.map((e) => e.seq)).toEqual(Array.from({ length: count }, (_, i) => i + 1));
      await logs[k]!.close();
      const again = await a.store.openLog(id);
      for (const after of [0, 1, 7, 20, count - 1, count]) {
        expect((await again.read(after, 5)).map((e) => e.seq)).toEqual(
          all
            .filter((e) => e.seq > after)
            .slice(0, 5)
            .map((e) => e.seq),
        );
      }
      await again.close();
    }
  });

  it("restores on one node a checkpoint made on another", async () => {
    const [a, b] = await twoNodes();
    await a.store.create({ ...base, id: "s3" });
    const native = a.store.paths("s3").native;
    await mkdir(native, { recursive: true });
    await writeFile(path.join(native, "log.jsonl"), "one\n");
    const files = [{ path: "log.jsonl", size: 4, append_only: true }];
    const log = await a.store.openLog("s3");
    await a.store.checkpoints("s3").create(native, files);
    await writeFile(path.join(native, "log.jsonl"), "one\ntwo\n");
    files[0]!.size = 8;
    const m2 = await a.store.checkpoints("s3").create(native, files);
    await log.close();
    const into = path.join(b.home, "restored");
    await b.store.checkpoints("s3").restore("latest", into);
    expect(await readFile(path.join(into, "log.jsonl"), "utf8")).toBe("one\ntwo\n");
    expect(await b.store.checkpoints("s3").list()).toEqual(["000001", m2.id]);
  });

  it("a node taking a session back restores what another node checkpointed since, even after reading its checkpoints", async () => {
    const [a, b] = await twoNodes();
    await a.store.create({ ...base, id: "s8" });
    const state = (node: TestNode) => path.join(node.store.paths("s8").native, "state.txt");
    const files = [{ path: "state.txt", size: 2, append_only: false }];
    let log = await a.store.openLog("s8");
    await writeFile(state(a), "v1");
    await log.append([logged(await a.store.checkpoints("s8").create(a.store.paths("s8").native, files))]);
    await log.close();
    log = await b.store.openLog("s8");
    expect(await readFile(state(b), "utf8")).toBe("v1");
    await writeFile(state(b), "v2");
    await log.append([logged(await b.store.checkpoints("s8").create(b.store.paths("s8").native, files))]);
    await log.close();
    // node-a reads the session's checkpoints meanwhile (a fork or restore there does): their manifests come along.
    expect(await a.store.checkpoints("s8").list()).toEqual(["000001", "000002"]);
    log = await a.store.openLog("s8");
    expect(await readFile(state(a), "utf8")).toBe("v2");
    await log.close();
    // Its own native dir, holding the latest checkpoint, is kept as it is.
    await writeFile(state(a), "v3");
    log = await a.store.openLog("s8");
    expect(await readFile(state(a), "utf8")).toBe("v3");
    await log.close();
  });

  it("refuses a checkpoint index naming anything but checkpoint ids, and writes nothing outside its cache", async () => {
    const [a] = await twoNodes();
    await a.store.create({ ...base, id: "s9" });
    const cache = a.store.paths("s9").checkpoints;
    const planted = path.relative(cache, path.join(a.home, "outside"));
    await a.ctx.blobs.putBlob({ name: "s9/index" }, Buffer.from(JSON.stringify([planted])));
    await a.ctx.blobs.putBlob({ name: `s9/manifests/${planted}.json` }, Buffer.from("{}"));
    const refused = await a.store
      .checkpoints("s9")
      .list()
      .catch((err: Error) => err);
    expect(refused).toBeInstanceOf(BrainError);
    expect((refused as Error).message).toContain(
      `the index in NATS (object s9/index) is damaged: it names ${JSON.stringify(planted)}, not a checkpoint id`,
    );
    expect(await readdir(a.home)).not.toContain("outside.json");
    // The fix it names works: the index deleted, the checkpoints are listed again, and a new one is made.
    const fix = /nats object del (\S+) ([^\s)]+)\)/.exec((refused as Error).message);
    expect(fix?.[2]).toBe("s9/index");
    expect(fix?.[1]).toBe((await a.ctx.blobs.status()).bucket);
    await a.ctx.blobs.delete("s9/index");
    expect(await a.store.checkpoints("s9").list()).toEqual([]);
    // The session can still be removed.
    await a.store.remove("s9");
    expect(await a.store.get("s9")).toBeUndefined();
  });

  it("refuses a checkpoint from a node that lost the session's lease, so the new owner's stays the latest", async () => {
    const [a, b] = await nats.twoNodes("log", { leaseTtlMs: 1500 });
    await a.store.create({ ...base, id: "s10" });
    const state = (node: TestNode) => path.join(node.store.paths("s10").native, "state.txt");
    const files = [{ path: "state.txt", size: 2, append_only: false }];
    const stale = await a.store.openLog("s10");
    await writeFile(state(a), "v1");
    await a.store.checkpoints("s10").create(a.store.paths("s10").native, files);
    // node-a freezes: its lease runs out and node-b takes the session, going on from v1 to v2.
    a.store.lease("s10")!.pauseRenewals(true);
    let log = await until("node-b's claim", () => b.store.openLog("s10").catch(() => undefined));
    await writeFile(state(b), "v2");
    await b.store.checkpoints("s10").create(b.store.paths("s10").native, files);
    // node-a wakes and checkpoints its stale native dir, as after a turn that ended before it froze.
    await writeFile(state(a), "v0");
    const refused = await a.store
      .checkpoints("s10")
      .create(a.store.paths("s10").native, files)
      .catch((err: unknown) => err);
    expect((refused as BrainError).code).toBe("locked");
    expect((refused as BrainError).message).toMatch(/no longer owns the session's log/);
    // Nor once it has let the session go.
    await stale.close();
    const after = await a.store
      .checkpoints("s10")
      .create(a.store.paths("s10").native, files)
      .catch((err: unknown) => err);
    expect((after as BrainError).message).toMatch(/it does not hold the session's lease/);
    expect(await b.store.checkpoints("s10").list()).toEqual(["000001", "000002"]);
    await log.close();
    log = await b.store.openLog("s10");
    expect(await readFile(state(b), "utf8")).toBe("v2");
    await log.close();
  });

  it("keeps a bounded tail in memory however large the events, and reads the rest from NATS", async () => {
    const [a] = await twoNodes();
    await a.store.create({ ...base, id: "s11" });
    const log = await a.store.openLog("s11");
    const big = "x".repeat(450 * 1024);
    for (let i = 0; i < 40; i++) await log.append([delta(`${i}:${big}`)]);
    const tail = (log as unknown as { tail: { events: SessionEvent[] } }).tail.events;
    const held = tail.reduce((sum, e) => sum + JSON.stringify(e).length, 0);
    // 18 MB appended: the tail holds at most twice its 8 MiB between trims.
    expect(held).toBeLessThanOrEqual(16 * 1024 * 1024);
    expect(tail.at(-1)?.seq).toBe(40);
    const all = await log.read(0);
    expect(all.map((e) => (e.data as { text: string }).text.split(":")[0])).toEqual(
      Array.from({ length: 40 }, (_, i) => String(i)),
    );
    await log.close();
  });

  it("streams a blob of many chunks to another node, and never takes bytes that are not the manifest's", async () => {
    const [a, b] = await twoNodes();
    await a.store.create({ ...base, id: "s7" });
    const native = a.store.paths("s7").native;
    await mkdir(native, { recursive: true });
    const big = randomBytes((1 << 20) + 12345); // nine of the object store's 128 KiB chunks, the last one short
    await writeFile(path.join(native, "state.bin"), big);
    const log = await a.store.openLog("s7");
    const m = await a.store
      .checkpoints("s7")
      .create(native, [{ path: "state.bin", size: big.length, append_only: false }]);
    await log.close();
    const into = path.join(b.home, "restored");
    await b.store.checkpoints("s7").restore(m.id, into);
    expect((await readFile(path.join(into, "state.bin"))).equals(big)).toBe(true);
    // The store damaged (other bytes under the blob's name): a node that pulls it refuses them and keeps nothing.
    const blob = m.files[0]!.segments[0]!.blob;
    await a.ctx.blobs.putBlob({ name: `s7/blobs/${blob}` }, Buffer.from("not the blob"));
    const cache = path.join(b.home, "another-cache");
    const pulled = new ReplicatedCheckpoints(b.ctx.blobs, "s7", cache, b.ctx.js, b.ctx.records);
    const refused = await pulled.restore(m.id, path.join(b.home, "again")).catch((err: Error) => err);
    expect(refused).toBeInstanceOf(BrainError);
    expect((refused as Error).message).toContain(
      `blob ${blob} (for "state.bin") as stored in NATS is 12 bytes`,
    );
    expect(await readdir(path.join(cache, "blobs"))).toEqual([]);
  });

  it("keeps every acknowledged event, once, when a NATS node is killed mid-stream", async () => {
    const [a, b] = await twoNodes();
    await a.store.create({ ...base, id: "s4" });
    const log = await a.store.openLog("s4");
    const acked: number[] = [];
    for (let i = 0; i < 150; i++) {
      if (i === 50) nats.cluster.kill(0);
      const [e] = await log.append([delta(String(i))]);
      acked.push(e!.seq);
    }
    nats.cluster.start(0);
    // The next test reaches node 0 alone (through its proxy): it must listen again first, which on a loaded
    // machine took longer than that test's three tries (each refused at once).
    await until(
      "NATS node 0 to listen again",
      () =>
        connect({ servers: [nats.cluster.servers[0]!], ignoreClusterUpdates: true }).then(
          (nc) => nc.close().then(() => true),
          () => undefined,
        ),
      60_000,
    );
    expect(acked).toEqual(Array.from({ length: 150 }, (_, i) => i + 1));
    const stored = await b.store.readEvents("s4");
    expect(stored.map((e) => (e.data as { text: string }).text)).toEqual(acked.map((s) => String(s - 1)));
    await log.close();
  }, 120_000);

  // A clustered stream checks the expected last sequence first (the late message makes it wrong); a single
  // server finds the repeated message id first (the late message looks like this append's own retry).
  // Its proxy was refused now and then on a loaded machine (in about one CI run in five), before any assertion:
  // node 0, killed by the test before, was not listening yet (that test now waits for it).
  it("acknowledges an append with the seq and content every reader sees, when a timed-out publish lands late", {
    timeout: 60_000,
    retry: 2,
  }, async () => {
    await lateLanding(nats.cluster, nats.prefix("late"), 3);
  });

  it("the same on a single NATS server", async () => {
    const single = await startNatsCluster({ nodes: 1 });
    try {
      await lateLanding(single, "late", 1);
    } finally {
      await single.stop();
    }
  }, 120_000);
});

/**
 * A writer whose publishes go through a proxy that holds them past their timeout: two appends fail, and their
 * messages land later, one right before the next append's publish, one before the next append begins.
 */
async function lateLanding(cluster: NatsCluster, prefix: string, replicas: number): Promise<void> {
  const target = new URL(cluster.servers[0]!);
  const proxy = await startNatsProxy({ host: target.hostname, port: Number(target.port) });
  // The writer's only way to NATS is the proxy.
  const nc = await connect({ servers: [proxy.url], ignoreClusterUpdates: true });
  const home = await mkdtemp(path.join(tmpdir(), "brain-late-"));
  let other: TestNode | undefined;
  try {
    const ctx = await openNatsContext(nc, { prefix, replicas, publishRetryMs: 500 });
    const store = new NatsSessionStore(ctx, { home, holder: { node: "node-a" } });
    other = await startStoreNode(cluster, "node-b", { prefix, replicas });
    const reader = other.store;
    await store.create({ ...base, id: "late" });
    const log = await store.openLog("late");
    const notified: SessionEvent[] = [];
    log.subscribe((events) => notified.push(...events));
    const acked: [number, string][] = [];
    const append = async (text: string) => {
      const [e] = await log.append([delta(text)]);
      acked.push([e!.seq, text]);
    };
    const timesOut = async (text: string) => {
      proxy.hold();
      const err = await log.append([delta(text)]).catch((e: BrainError) => e);
      expect((err as BrainError).message).toMatch(/append failed .*timeout/);
    };
    const texts = (events: SessionEvent[]) => events.map((e) => [e.seq, (e.data as { text: string }).text]);

    await append("one");
    // Lands right before the next append's publish, which has the same first seq (and message id).
    await timesOut("late 1");
    proxy.release({ onNext: true });
    await append("two");
    // Lands before the next append begins: that commit finds it on the stream.
    await timesOut("late 2");
    proxy.release();
    await until("the late publish", async () =>
      (await reader.readEvents("late")).length === 4 ? true : undefined,
    );
    await append("three");

    const expected = [
      [1, "one"],
      [2, "late 1"],
      [3, "two"],
      [4, "late 2"],
      [5, "three"],
    ];
    expect(acked).toEqual([
      [1, "one"],
      [3, "two"],
      [5, "three"],
    ]);
    expect(texts(await reader.readEvents("late"))).toEqual(expected);
    // The owner's memory and subscribers agree with every other reader.
    expect(texts(await log.read(0))).toEqual(expected);
    expect(texts(notified)).toEqual(expected);
    await log.close();
  } finally {
    await nc.close().catch(() => {});
    await proxy.close();
    await other?.close();
    await rm(home, { recursive: true, force: true });
  }
}
