// One owner per session in cluster mode: the lease. A second node's open is refused naming the owner; an owner
// that stops renewing (SIGSTOP, simulated by pausing its renewals) loses the session to the next node, and its
// late appends are refused (no split brain), by its own lease check and by the stream's sequence fence.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { connect, TimeoutError } from "@nats-io/transport-node";
import { describe, expect, it, vi } from "vitest";
import { BrainError } from "../../core/errors.js";
import type { EventLog } from "../../core/event-log.js";
import type { NewEvent } from "../../protocol/events.js";
import { useNatsCluster } from "../../testing/nats-bed.js";
import { startNatsProxy } from "../../testing/nats-proxy.js";
import { startStoreNode, type TestNode } from "../../testing/nats-store.js";
import { openNatsContext } from "./context.js";
import type { NatsStoreError } from "./errors.js";
import type { NatsEventLog } from "./event-log.js";
import { Lease } from "./lease.js";
import { NatsSessionStore } from "./session-store.js";

const base = { harness: "process", config: { model: "m1" } };
const note = (text: string): NewEvent => ({ type: "user.prompt", turn: "t1", data: { text } }) as NewEvent;
const TTL = 1500;

const nats = useNatsCluster();
const twoNodes = () => nats.twoNodes("lease", { leaseTtlMs: TTL });

async function codeOf(promise: Promise<unknown>): Promise<string> {
  return promise.then(
    () => "resolved",
    (err) => (err instanceof BrainError ? err.code : String(err)),
  );
}

/** Opens the log on `node` once the lease is free (a bounded wait: a few TTLs). */
async function claimWhenFree(node: TestNode, id: string): Promise<EventLog> {
  const deadline = Date.now() + 20 * TTL;
  for (;;) {
    try {
      return await node.store.openLog(id);
    } catch (err) {
      if (!(err instanceof BrainError) || err.code !== "locked" || Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

describe("session leases", () => {
  it("refuses a second node's open while the owner renews, naming the owner; frees it on close", async () => {
    // A longer lease here: the renewals must outlast two of them, and on a loaded machine a 1.5 s lease (a renewal
    // every 0.5 s) is lost to a one-second stall of the event loop, which is not what this test is about.
    const LONG_TTL = 4000;
    const [a, b] = await nats.twoNodes("lease", { leaseTtlMs: LONG_TTL });
    await a.store.create({ ...base, id: "l1" });
    const log = await a.store.openLog("l1");
    // Several TTLs pass: renewals keep the lease.
    await new Promise((r) => setTimeout(r, 2 * LONG_TTL));
    const refused = await b.store.openLog("l1").catch((err: BrainError) => err);
    expect(refused).toMatchObject({ code: "locked", session: "l1" });
    expect((refused as BrainError).message).toMatch(/owned by node node-a/);
    expect(await b.store.owner("l1")).toBe("node-a");
    await log.append([note("a")]);
    await log.close();
    expect(await b.store.owner("l1")).toBeUndefined();
    const next = await b.store.openLog("l1");
    expect((await next.append([note("b")]))[0]!.seq).toBe(2);
    await next.close();
  });

  it("a paused owner loses the session: the next node claims it, the old owner's appends are refused", async () => {
    const [a, b] = await twoNodes();
    await a.store.create({ ...base, id: "l2" });
    const stale = (await a.store.openLog("l2")) as NatsEventLog;
    await stale.append([note("a1")]);
    const lost: NatsStoreError[] = [];
    a.store.lease("l2")!.onLost((err) => lost.push(err));
    a.store.lease("l2")!.pauseRenewals(true);

    const owner = await claimWhenFree(b, "l2");
    expect(await a.store.owner("l2")).toBe("node-b");
    await owner.append([note("b1")]);
    expect(await codeOf(stale.append([note("a2 (late)")]))).toBe("locked");
    expect(lost).toHaveLength(1);
    expect(stale.fencedBy?.code).toBe("locked");
    // Letting go never deletes the new owner's lease.
    await stale.close();
    expect(await b.store.owner("l2")).toBe("node-b");
    await owner.append([note("b2")]);
    const texts = (await b.store.readEvents("l2")).map((e) => (e.data as { text: string }).text);
    expect(texts).toEqual(["a1", "b1", "b2"]);
    await owner.close();
  });

  it("the stream refuses a stale owner's append even before its own clock notices", async () => {
    const [a, b] = await twoNodes();
    await a.store.create({ ...base, id: "l3" });
    const stale = (await a.store.openLog("l3")) as NatsEventLog;
    const lease = a.store.lease("l3")!;
    lease.pauseRenewals(true);
    const owner = await claimWhenFree(b, "l3");
    await owner.append([note("b1")]);
    // As if the paused process woke with a clock that has not run (SIGCONT right after SIGSTOP): skip the
    // lease check, so only the stream's expected-sequence fence stands between it and the log.
    (lease as unknown as { check(): void }).check = () => {};
    const refused = await stale.append([note("a (late)")]).catch((err: BrainError) => err);
    expect(refused).toMatchObject({ code: "locked", session: "l3" });
    // The same seq is taken (its message id is a duplicate of the new owner's) and the subject has moved on:
    // either refusal names the loss of ownership.
    expect((refused as BrainError).message).toMatch(/no longer owns the session's log/);
    expect((await b.store.readEvents("l3")).map((e) => e.seq)).toEqual([1]);
    await owner.close();
    await stale.close();
  });
});

describe("an append whose publish is retried past the lease", () => {
  it("is refused once the lease ran out: its retry is not stored, and the new owner writes on", async () => {
    // The stale owner's only way to NATS is a proxy that can lose its publishes, as a network partition would.
    const target = new URL(nats.cluster.servers[0]!);
    const proxy = await startNatsProxy({ host: target.hostname, port: Number(target.port) });
    const nc = await connect({ servers: [proxy.url], ignoreClusterUpdates: true });
    const home = await mkdtemp(path.join(tmpdir(), "brain-stale-"));
    try {
      const prefix = nats.prefix("retried");
      // Retries go on longer than the lease lasts, as with the defaults (15 s against 10 s).
      const ctx = await openNatsContext(nc, { prefix, leaseTtlMs: TTL, publishRetryMs: 30_000 });
      const a = new NatsSessionStore(ctx, { home, holder: { node: "node-a" } });
      const b = await startStoreNode(nats.cluster, "node-b", { prefix, leaseTtlMs: TTL });
      try {
        await a.create({ ...base, id: "l13" });
        const stale = await a.openLog("l13");
        await stale.append([note("a1")]);
        proxy.hold();
        a.lease("l13")!.pauseRenewals(true);
        const late = codeOf(stale.append([note("a2 (retried past the lease)")]));
        const owner = await claimWhenFree(b, "l13");
        // The first try is lost; the retries after it reach NATS, by now under node-b's lease.
        proxy.drop();
        expect(await late).toBe("locked");
        expect(await codeOf(owner.append([note("b1")]))).toBe("resolved");
        const texts = (await b.store.readEvents("l13")).map((e) => (e.data as { text: string }).text);
        expect(texts).toEqual(["a1", "b1"]);
        await owner.close();
        await stale.close();
        await a.close();
      } finally {
        await b.close();
      }
    } finally {
      await nc.close().catch(() => {});
      await proxy.close();
      await rm(home, { recursive: true, force: true });
    }
  });
});

describe("a lease released while a renewal is in flight", () => {
  it("frees the session at once: the release waits for the renewal and deletes at its revision", async () => {
    const [a, b] = await twoNodes();
    await a.store.create({ ...base, id: "l9" });
    const log = await a.store.openLog("l9");
    type Bucket = { update: (...args: unknown[]) => Promise<number> };
    const leases = (a.store as unknown as { leases: Map<string, { bucket: Bucket }> }).leases;
    const bucket = leases.get("l9")!.bucket;
    const update = bucket.update.bind(bucket);
    let started: () => void = () => {};
    const renewalStarted = new Promise<void>((resolve) => {
      started = resolve;
    });
    // The next renewal is done in NATS, but its answer arrives late: the close below lands in between.
    bucket.update = async (...args: unknown[]) => {
      const revision = await update(...args);
      started();
      await new Promise((r) => setTimeout(r, 200));
      return revision;
    };
    await renewalStarted;
    await log.close();
    bucket.update = update;
    expect(await b.store.owner("l9")).toBeUndefined();
  });
});

describe("a renewal that landed but whose answer was lost", () => {
  it("keeps the lease: the next renewal finds its own value in the key and goes on from there", async () => {
    const [a, b] = await twoNodes();
    await a.store.create({ ...base, id: "l10" });
    const log = await a.store.openLog("l10");
    type Bucket = { update: (...args: unknown[]) => Promise<number> };
    const lease = a.store.lease("l10")!;
    const bucket = (lease as unknown as { bucket: Bucket }).bucket;
    const update = bucket.update.bind(bucket);
    let landed = 0;
    // One renewal is stored in NATS, but its answer never comes (a leader election, a dropped reply).
    bucket.update = async (...args: unknown[]) => {
      bucket.update = update;
      await update(...args);
      landed++;
      throw new TimeoutError();
    };
    const lost: NatsStoreError[] = [];
    lease.onLost((err) => lost.push(err));
    // Two more TTLs: renewals after the lost answer must keep the lease.
    await new Promise((r) => setTimeout(r, 2 * TTL));
    expect(landed).toBe(1);
    expect(lost.map((err) => err.message)).toEqual([]);
    expect((await log.append([note("still the owner")]))[0]!.seq).toBe(1);
    expect(await b.store.owner("l10")).toBe("node-a");
    await log.close();
    expect(await b.store.owner("l10")).toBeUndefined();
  });
});

describe("a claim that landed but whose answer was lost", () => {
  it("is this node's: the lease is taken from the key holding its own claim", async () => {
    const [a, b] = await twoNodes();
    const leases = a.ctx.leases;
    const create = leases.create.bind(leases);
    // The claim is stored in NATS, but its answer never comes.
    const bucket = Object.create(leases, {
      create: {
        value: async (...args: Parameters<typeof create>) => {
          await create(...args);
          throw new TimeoutError();
        },
      },
    });
    const lease = await Lease.claim(bucket, "l11", { node: "node-a" }, TTL);
    expect(await b.store.owner("l11")).toBe("node-a");
    lease.check();
    await lease.release();
    expect(await b.store.owner("l11")).toBeUndefined();
  });
});

describe("a lease's clock", () => {
  it("runs out after its TTL even when the wall clock is set back meanwhile", async () => {
    const [a] = await twoNodes();
    const lease = await Lease.claim(a.ctx.leases, "l12", { node: "node-a" }, TTL);
    lease.pauseRenewals(true);
    // NTP or an operator steps the clock back an hour: the server's expiry does not care, nor may the lease.
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(Date.now() - 3_600_000);
    try {
      await new Promise((r) => setTimeout(r, TTL + 100));
      expect(() => lease.check()).toThrow(/past its 1500 ms TTL/);
    } finally {
      vi.useRealTimers();
      await lease.release();
    }
  });
});

describe("the lease TTL", () => {
  it("is the leases bucket's: a node configured with another is refused, naming both; one unset takes it", async () => {
    const [a] = await twoNodes();
    const prefix = a.ctx.stream.replace(/_events$/, "");
    expect((await a.ctx.leases.status()).ttl).toBe(TTL);
    const nc = await nats.cluster.connect("node-c");
    try {
      // Longer or shorter, a lease that is not the one the server expires would let two nodes own a session.
      for (const leaseTtlMs of [30_000, 500]) {
        const refused = await openNatsContext(nc, { prefix, leaseTtlMs }).catch((err: BrainError) => err);
        expect(refused).toBeInstanceOf(BrainError);
        expect((refused as BrainError).message).toContain(`lease TTL is ${leaseTtlMs} ms`);
        expect((refused as BrainError).message).toContain(`expires leases after ${TTL} ms`);
        expect((refused as BrainError).message).toMatch(/set it to 1500 or leave it unset/);
      }
      // The bucket was not changed by the refused nodes.
      expect((await a.ctx.leases.status()).ttl).toBe(TTL);
      expect((await openNatsContext(nc, { prefix, leaseTtlMs: TTL })).leaseTtlMs).toBe(TTL);
      expect((await openNatsContext(nc, { prefix })).leaseTtlMs).toBe(TTL);
    } finally {
      await nc.close();
    }
  });
});
