// A runner that writes events faster than the session's log can make them durable (its fsync held by the test):
// Brain stops reading the runner's stdout while the log is behind by more than BACKLOG_BYTES, so what it holds
// stays bounded and the runner blocks on its full pipe; once the disk comes back, every event arrives in order.
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { BACKLOG_BYTES } from "../../core/backlog.js";
import type { HarnessFactory } from "../../core/harness.js";
import type { Session } from "../../core/session.js";
import { testIO } from "../../store/fs/testing/fault-io.js";
import {
  blocked,
  expectWholeFlood,
  FLOOD_EVENTS,
  FLOOD_PAD,
  floodingRunner,
  PIPE_CHUNK,
  progressIn,
  waiting,
  withoutGate,
} from "../../testing/backlog.js";
import { events, makeBrain, type TestBrain } from "../../testing/brain.js";
import { READ_AHEAD_BYTES } from "../read-gate.js";

let t: TestBrain;
afterEach(async () => {
  await t?.cleanup();
});

/** How many deltas the session's runner says it has written. */
const progress = (session: Session) => progressIn(t.store.paths(session.id).native);

/**
 * Starts the flood with the log's next fsync held; returns the fsync's release. `other`:
 * a session opened before on the same factory (a shared runner's second attachment).
 */
async function floodHeld(factory: HarnessFactory, other = false) {
  const io = testIO();
  t = makeBrain({ factories: [factory], io });
  const second = other ? await t.brain.create({ harness: "inline" }) : undefined;
  if (second) expect((await (await second.prompt("first")).settled).status).toBe("completed");
  const session = await t.brain.create({ harness: "inline" });
  const turn = await session.prompt("flood");
  // The fsync is held before the first delta: none of the flood is durable, however busy the machine.
  const native = t.store.paths(session.id).native;
  await expect.poll(() => existsSync(join(native, "ready")), { timeout: 30_000 }).toBe(true);
  const release = io.holdDurable();
  writeFileSync(join(native, "go"), "");
  return { session, turn, release, second };
}

describe("a runner flooding a session whose disk has fallen behind", () => {
  it("without the gate, grows what Brain holds with what the runner writes (the state the gate prevents)", async () => {
    const { session, release } = await floodHeld(withoutGate(floodingRunner()));
    try {
      await expect.poll(() => waiting(session), { timeout: 60_000 }).toBeGreaterThan(3 * BACKLOG_BYTES);
    } finally {
      release();
    }
  }, 180_000);

  it("is not read past the bound: it blocks on its pipe, and every event arrives in order once the disk is back", async () => {
    const { session, turn, release } = await floodHeld(floodingRunner());
    try {
      const written = await blocked(session, () => progress(session));
      expect(written).toBeLessThan(FLOOD_EVENTS);
      expect(waiting(session)).toBeLessThanOrEqual(BACKLOG_BYTES + PIPE_CHUNK);
    } finally {
      release();
    }
    expect((await turn.settled).status).toBe("completed");
    expectWholeFlood(await events(session));
  }, 180_000);

  it("still settles a close asked for while the runner is paused", async () => {
    const { session, release } = await floodHeld(floodingRunner());
    await blocked(session, () => progress(session));
    const closing = session.close();
    release();
    await expect(closing).resolves.toBeUndefined();
  }, 180_000);

  it("pauses a shared runner past its read-ahead, and a session closed while paused lets the others go on", async () => {
    const { session, release, second } = await floodHeld(floodingRunner(true), true);
    const written = await blocked(session, () => progress(session));
    // Its log holds what it did at the bound; its frames read past that are held back up to the read-ahead (see
    // shared-read-ahead.test.ts), then the runner is paused: a runner never paused is read on past both (its
    // flood waits in Brain for the disk). The deltas' texts alone are less than what Brain holds of them.
    expect(waiting(session)).toBeLessThanOrEqual(BACKLOG_BYTES + PIPE_CHUNK);
    expect(written * (FLOOD_PAD + 6)).toBeGreaterThan(BACKLOG_BYTES + READ_AHEAD_BYTES / 4);
    expect(written * (FLOOD_PAD + 6)).toBeLessThanOrEqual(BACKLOG_BYTES + READ_AHEAD_BYTES + 4 * PIPE_CHUNK);
    // The other session's prompt waits behind the flood in the one pipe they share. Through the store's journal
    // (BRAIN_STORE_JOURNAL=1) its own commit waits behind the held sync as well, which is every log's: as a disk's
    // stall stalls every file on it. So it is not awaited before the release; the pause is the flood's, above.
    const behind = second!.prompt("behind");
    const closing = session.close();
    release();
    await expect(closing).resolves.toBeUndefined();
    expect((await (await behind).settled).status).toBe("completed");
    // The closed session holds nothing back: the runner goes on for the other.
    const after = await second!.prompt("after");
    expect((await after.settled).status).toBe("completed");
    const texts = (await events(second!)).filter((e) => e.type === "assistant.delta").map((e) => e.data);
    expect(texts).toEqual([{ text: "echo: first" }, { text: "echo: behind" }, { text: "echo: after" }]);
  }, 180_000);
});
