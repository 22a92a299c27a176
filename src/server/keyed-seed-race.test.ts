// Two keyed forks under one Idempotency-Key reaching two cluster nodes at the same moment (not a retry: neither
// finds the other's record when it looks first). The node that loses the race for the fork's lease waits for
// the winner as a retry does, so both callers get the same whole fork, or a 409 that says to send the same
// request again later: never the lease's raw refusal, nor the fork while the winner still seeds it. The order is
// made by holding one node's store (a lease claimed and its record not yet written, a create held, a restore).
import { expect, it } from "vitest";
import type { SessionRecord } from "../protocol/session.js";
import { expectWholeFork, keyedFork as fork, holdRestores, onTwoNodes } from "../testing/keyed-cluster.js";
import { useNatsCluster } from "../testing/nats-bed.js";
import type { TestNode } from "../testing/nats-store.js";

const bed = useNatsCluster();

/** A gate a store call waits at: `reached()` once one did, `open()` lets it (and every later one) go on. */
function gate(): { reached: () => boolean; open: () => void; pass: () => Promise<void> } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  let reached = false;
  const pass = () => {
    reached = true;
    return opened;
  };
  return { reached: () => reached, open, pass };
}

/** Node `b`'s createOpen refusals (its lease claim on a session another node holds), collected. */
function refusalsOf(b: TestNode, before?: () => Promise<void>): unknown[] {
  const refused: unknown[] = [];
  const createOpen = b.store.createOpen.bind(b.store);
  b.store.createOpen = async (input) => {
    await before?.();
    try {
      return await createOpen(input);
    } catch (err) {
      refused.push(err);
      throw err;
    }
  };
  return refused;
}

it("gives the node that lost the lease, before the winner wrote its record, the same whole fork", async () => {
  await onTwoNodes(bed, "unwritten", undefined, async ({ a, b, da, db, source, id }) => {
    // Node A claims the fork's lease, then its record's write waits: a fork claimed and not yet in the store.
    const creating = gate();
    const create = a.store.create.bind(a.store);
    a.store.create = async (input) => {
      await creating.pass();
      return create(input);
    };
    const refused = refusalsOf(b);
    const first = fork(da, source);
    first.catch(() => {});
    await expect.poll(creating.reached, { timeout: 30_000 }).toBe(true);
    // Node B finds no record, and its claim of the lease is refused: node A holds it.
    const second = fork(db, source);
    second.catch(() => {});
    await expect.poll(() => refused.length, { timeout: 30_000 }).toBeGreaterThan(0);
    expect(String(refused[0])).toMatch(/is owned by node node-a/);
    creating.open();
    const [one, two] = [await first, await second];
    expect([one.status, one.body.id]).toEqual([201, id]);
    expect([two.status, two.body.id], JSON.stringify(two.body)).toEqual([201, id]);
    await expectWholeFork(db.brain, id, source);
    expect((await db.brain.events(id)).filter((e) => e.type === "session.opened")).toHaveLength(1);
  });
});

it("answers the node that lost the lease while the winner seeds with a 409 saying to send it again, then the fork", async () => {
  await onTwoNodes(bed, "seeding", 500, async ({ a, b, da, db, source, id }) => {
    const { seeding, release } = holdRestores(a);
    // Node B looks for the key's record first (none yet), then its create waits until node A seeds the fork.
    const making = gate();
    const refused = refusalsOf(b, making.pass);
    const second = fork(db, source);
    second.catch(() => {});
    await expect.poll(making.reached, { timeout: 30_000 }).toBe(true);
    const first = fork(da, source);
    first.catch(() => {});
    await expect.poll(seeding, { timeout: 30_000 }).toBe(true);
    const record: SessionRecord = await da.brain.record(id);
    expect(record.idempotency?.key).toBe("f1");
    making.open();
    // Node A is alive and still seeds: node B neither answers with the half-made fork nor the raw refusal.
    const early = await second;
    expect(refused).toHaveLength(1);
    expect(early.status, JSON.stringify(early.body)).toBe(409);
    const text = JSON.stringify(early.body);
    expect(text).toMatch(/still being made after \d+ s \(session k[^ ]* is owned by node node-a\)/);
    expect(text).toMatch(/send the same request under the same key again later/);
    expect(text).not.toMatch(/send its commands there/);
    release();
    expect((await first).status).toBe(201);
    const again = await fork(db, source);
    expect([again.status, again.body.id]).toEqual([201, id]);
    await expectWholeFork(db.brain, id, source);
  });
});
