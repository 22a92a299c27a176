// A shared runner host carries many sessions over one stdout: one session whose log is behind (its fsync held by
// the test) has its frames held back in memory, up to READ_AHEAD_BYTES, while the runner's stdout is read on for
// the others; their turns go on. Past that bound the stdout is paused (the last resort, see the backpressure
// tests); on release the held session gets every event in order.
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import { BACKLOG_BYTES } from "../../core/backlog.js";
import type { Session } from "../../core/session.js";
import { journalByDefault } from "../../store/fs/log-tuning.js";
import { testIO } from "../../store/fs/testing/fault-io.js";
import {
  expectWholeFlood,
  floodingRunner,
  PIPE_CHUNK,
  progressIn,
  READ_AHEAD_FLOOD,
  waiting,
} from "../../testing/backlog.js";
import { events, makeBrain, type TestBrain } from "../../testing/brain.js";
import type { AttachmentTimeouts } from "./attachment-timeouts.js";

let t: TestBrain;
afterEach(async () => {
  await t?.cleanup();
});

const deltaTexts = async (session: Session) =>
  (await events(session)).filter((e) => e.type === "assistant.delta").map((e) => e.data);

/**
 * Two sessions on one shared flooding runner: `other` has had a turn; `held` has written its whole flood with its
 * log's fsync held (which `release` lets go of), its stdout read on past the log's bound.
 */
async function floodWhileHeld(timeouts?: Partial<AttachmentTimeouts>) {
  const io = testIO();
  t = makeBrain({ factories: [floodingRunner(true, READ_AHEAD_FLOOD, timeouts)], io });
  const other = await t.brain.create({ harness: "inline" });
  expect((await (await other.prompt("first")).settled).status).toBe("completed");
  const held = await t.brain.create({ harness: "inline" });
  const turn = await held.prompt("flood");
  const native = t.store.paths(held.id).native;
  await expect.poll(() => existsSync(join(native, "ready")), { timeout: 30_000 }).toBe(true);
  // The other session is idle: the next fsync, held, is the flooded log's.
  const release = io.holdDurable();
  try {
    writeFileSync(join(native, "go"), "");
    // The runner writes its whole flood: its stdout is read on though the held log is past its bound.
    await expect.poll(() => progressIn(native), { timeout: 60_000, interval: 250 }).toBe(READ_AHEAD_FLOOD);
    expect(waiting(held)).toBeGreaterThan(BACKLOG_BYTES);
  } catch (err) {
    release();
    throw err;
  }
  return { other, held, turn, release };
}

// Through the store's journal one held sync is every log's (as a disk's stall stalls every file on it): no one
// session's log can be held alone there.
describe.skipIf(journalByDefault())("a shared runner with one session whose log is behind", () => {
  it("goes on serving its other sessions, and the held one gets every event in order once its log is back", async () => {
    const { other, held, turn, release } = await floodWhileHeld();
    let settled = false;
    void turn.settled.then(() => {
      settled = true;
    });
    try {
      // The other session's turn runs to its end meanwhile, its events in its log.
      const next = await other.prompt("next");
      expect((await next.settled).status).toBe("completed");
      expect(await deltaTexts(other)).toEqual([{ text: "echo: first" }, { text: "echo: next" }]);
      // What the held session's log holds stayed at its bound; the rest of its turn (its end too) waits in order.
      expect(waiting(held)).toBeLessThanOrEqual(BACKLOG_BYTES + PIPE_CHUNK);
      expect(settled).toBe(false);
    } finally {
      release();
    }
    expect((await turn.settled).status).toBe("completed");
    expectWholeFlood(await events(held), READ_AHEAD_FLOOD);
    const after = await held.prompt("after");
    expect((await after.settled).status).toBe("completed");
  }, 180_000);

  it("does not let go of a held session for an interrupt whose answer is among its frames held back", async () => {
    // A short grace, outlived many times while held: its answer waits held back, not a runner that did not settle.
    const { other, held, turn, release } = await floodWhileHeld({ interruptGraceMs: 100 });
    const interrupting = held.interrupt();
    try {
      await sleep(2_000);
      const next = await other.prompt("next");
      expect((await next.settled).status).toBe("completed");
    } finally {
      release();
    }
    await expect(interrupting).resolves.toBeUndefined();
    expect(["interrupted", "completed"]).toContain((await turn.settled).status);
    // Not detached: every delta it wrote before the interrupt's answer reached the log, in order.
    expectWholeFlood(await events(held), READ_AHEAD_FLOOD);
    const warnings = (await events(held)).filter((e) => e.type === "harness.warning");
    expect(warnings).toEqual([]);
    const after = await held.prompt("after");
    expect((await after.settled).status).toBe("completed");
  }, 180_000);
});
