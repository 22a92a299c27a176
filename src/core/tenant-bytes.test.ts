// A tenant's sum of bytes lags behind what other processes on the same store write (a cluster node, a `brain run`
// on the same home): once the sum nears its bound it is measured again from the store, at most once per interval,
// so that a tenant already at its bound cannot make each of its requests measure all its sessions.
import { afterEach, describe, expect, it } from "vitest";
import { FsSessionStore } from "../store/fs/index.js";
import { makeBrain, type TestBrain, waitForEvent } from "../testing/brain.js";
import { TenantBytes } from "./tenant-bytes.js";

const brains: TestBrain[] = [];
afterEach(() => Promise.all(brains.splice(0).map((b) => b.cleanup())));

/** A session of the other Brain (the other process) that took one prompt of `text`, its turn settled. */
async function written(other: TestBrain, text: string): Promise<string> {
  const session = await other.brain.create({ harness: "echo" });
  const { turn } = await session.prompt(text);
  await waitForEvent(session, (e) => e.turn === turn && e.type === "turn.settled");
  return session.id;
}

describe("TenantBytes", () => {
  it("measures a tenant near its bound again, seeing what another Brain on the same home wrote", async () => {
    const other = makeBrain();
    brains.push(other);
    const store = new FsSessionStore(other.home);
    const mine = await written(other, "x".repeat(8 << 10));
    const held = await store.logBytes(mine);
    // The bound just over this session's bytes: its sum, once taken, is within 90 % of it.
    const bound = Math.ceil(held / 0.95);
    let listed = 0;
    const sums = (remeasureMs: number) =>
      new TenantBytes(
        (tenant) => {
          listed++;
          return store.list(undefined, tenant);
        },
        (id) => store.logBytes(id),
        bound,
        remeasureMs,
      );
    const often = sums(0);
    const seldom = sums(3_600_000);
    expect(await often.update(undefined, mine, held)).toBe(held);
    expect(await seldom.update(undefined, mine, held)).toBe(held);
    expect(listed).toBe(2);

    // Behind both sums' backs, the other Brain writes a second session of the same (default) tenant.
    const theirs = await written(other, "y".repeat(4 << 10));
    const total = held + (await store.logBytes(theirs));
    expect(total).toBeGreaterThan(bound);
    expect(await often.update(undefined, mine, held)).toBe(total);
    // Measured again only once its interval has passed: a tenant at its bound costs one measure per interval.
    expect(await seldom.update(undefined, mine, held)).toBe(held);
    expect(listed).toBe(3);
  });
});
