// Compare-and-set on a cluster KV key (./kv-update.ts): nats-server 2.9 lets writes racing with one expected
// revision all through, so two nodes patching one session record at once could each be told they won while the
// later write, made on the revision both read, dropped the earlier one's patch; and two nodes claiming a lease let go
// (a deleted key) could both be told they hold it.
import { describe, expect, it } from "vitest";
import { useNatsCluster } from "../../testing/nats-bed.js";
import { reservedIds, reserveId } from "./checkpoint-ids.js";
import { Lease } from "./lease.js";
import { readMark, writeMark } from "./seq-mark.js";

const nats = useNatsCluster();

describe("a session record two nodes patch at once", () => {
  it("keeps both patches, every time", async () => {
    const [a, b] = await nats.twoNodes("race", { leases: false });
    const lost: string[] = [];
    // Racing is a matter of chance: a quarter to a third of the rounds lost a patch here without the fix.
    for (let i = 0; i < 24; i++) {
      const { id } = await a.store.create({ harness: "process", config: { model: "m1" } });
      await Promise.all([
        a.store.update(id, { editor_cwd: "/from-a" }),
        b.store.update(id, { tenant: "from-b" }),
      ]);
      const record = await b.store.get(id);
      if (record?.editor_cwd !== "/from-a" || record.tenant !== "from-b") {
        lost.push(`${id}: editor_cwd ${record?.editor_cwd}, tenant ${record?.tenant}`);
      }
    }
    expect(lost).toEqual([]);
  }, 120_000);

  it("builds a patch given as a function on the record as the update finds it: two nodes adding to a list both land", async () => {
    const [a, b] = await nats.twoNodes("lists", { leases: false });
    const lost: string[] = [];
    const add =
      (key: string) => (current: { restores?: { key: string; sent: string; checkpoint: string }[] }) => ({
        restores: [...(current.restores ?? []), { key, sent: "s", checkpoint: "000001" }],
      });
    for (let i = 0; i < 12; i++) {
      const { id } = await a.store.create({ harness: "process", config: { model: "m1" } });
      await Promise.all([a.store.update(id, add("from-a")), b.store.update(id, add("from-b"))]);
      const keys = (await b.store.get(id))?.restores?.map((r) => r.key).sort();
      if (keys?.join() !== "from-a,from-b") lost.push(`${id}: ${keys?.join()}`);
    }
    expect(lost).toEqual([]);
  }, 120_000);
});

describe("reservations two nodes make at once", () => {
  it("give each checkpoint its own id: a stale owner and its successor never both hold one", async () => {
    const [a, b] = await nats.twoNodes("ids", { leases: false });
    const shared: string[] = [];
    for (let i = 0; i < 24; i++) {
      const session = `s${i}`;
      await reserveId(a.ctx.records, session, 1);
      const [fromA, fromB] = await Promise.all([
        reserveId(a.ctx.records, session, 2),
        reserveId(b.ctx.records, session, 2),
      ]);
      if (fromA === fromB) shared.push(`${session}: both reserved ${fromA}`);
      expect(await reservedIds(a.ctx.records, session)).toEqual(["000001", "000002", "000003"]);
    }
    expect(shared).toEqual([]);
  }, 120_000);

  it("of a log's seqs keep the larger: a stale writer's smaller one landing beside it never lowers it", async () => {
    const [a, b] = await nats.twoNodes("marks", { leases: false });
    const lowered: string[] = [];
    for (let i = 0; i < 24; i++) {
      const session = `s${i}`;
      await writeMark(a.ctx.records, session, "i1", 10);
      await Promise.all([
        writeMark(a.ctx.records, session, "i1", 5000),
        writeMark(b.ctx.records, session, "i1", 9000),
      ]);
      const held = await readMark(a.ctx.records, session, "i1");
      if (held !== 9000) lowered.push(`${session}: ${held}`);
    }
    expect(lowered).toEqual([]);
  }, 120_000);
});

describe("a lease two nodes claim at once once it was let go", () => {
  it("is held by one of them, every time", async () => {
    const [a, b] = await nats.twoNodes("claims", { leases: false });
    const both: string[] = [];
    // Racing is a matter of chance: 6 rounds of 40 gave both nodes the lease here without the fix.
    for (let i = 0; i < 40; i++) {
      const session = `s${i}`;
      await (await Lease.claim(a.ctx.leases, session, { node: "a" }, 60_000)).release();
      const claims = await Promise.allSettled([
        Lease.claim(a.ctx.leases, session, { node: "a" }, 60_000),
        Lease.claim(b.ctx.leases, session, { node: "b" }, 60_000),
      ]);
      const held = claims.flatMap((c) => (c.status === "fulfilled" ? [c.value] : []));
      if (held.length !== 1) both.push(`${session}: held by ${held.map((l) => l.holder.node).join(", ")}`);
      for (const lease of held) await lease.release();
    }
    expect(both).toEqual([]);
  }, 120_000);
});
