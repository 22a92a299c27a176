// A shared runner host bounds what it holds back for all its sessions behind together (hostReadAheadBytes), not
// only for each: several sessions whose logs are behind (each log's fsync held by the test) have their frames held
// back, each well within its own read-ahead, until together they pass the host's bound; then the runner's stdout
// is paused, and what is held back stays within the bound (but for the pipe read that crossed it and a frame).
// Once the logs are back every session gets every event, in order.
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { BACKLOG_BYTES } from "../../core/backlog.js";
import type { Session } from "../../core/session.js";
import { journalByDefault } from "../../store/fs/log-tuning.js";
import { testIO } from "../../store/fs/testing/fault-io.js";
import {
  blocked,
  expectWholeFlood,
  FLOOD_PAD,
  floodingRunner,
  PIPE_CHUNK,
  progressIn,
  READ_AHEAD_FLOOD,
  waiting,
} from "../../testing/backlog.js";
import { events, makeBrain, type TestBrain } from "../../testing/brain.js";
import { HOST_READ_AHEAD_BYTES, READ_AHEAD_BYTES } from "../read-gate.js";

let t: TestBrain;
afterEach(async () => {
  await t?.cleanup();
});

/**
 * The host's bound, well within one session's read-ahead: each flood holds back about 1.2 MiB (measured), so two
 * or three sessions are held back whole and a later one passes it.
 */
const BUDGET = READ_AHEAD_BYTES;
/** Sessions flooded in turn until the host pauses: more than the bound lets through whole. */
const SESSIONS = 5;
/** A frame of the flood as the gate counts it, with room for its ids. */
const FRAME = FLOOD_PAD + 6 + 256;

interface Flooder {
  session: Session;
  turn: Awaited<ReturnType<Session["prompt"]>>;
  native: string;
}

// Through the store's journal one held sync is every log's: no one session's log can be held alone there.
describe.skipIf(journalByDefault())("a shared runner with several sessions whose logs are behind", () => {
  it("pauses its stdout once what they hold back together passes the host's bound, and delivers it all in order", async () => {
    const io = testIO();
    const factory = floodingRunner(true, READ_AHEAD_FLOOD, undefined, { hostReadAheadBytes: BUDGET });
    t = makeBrain({ factories: [factory], io });
    const flooders: Flooder[] = [];
    for (let i = 0; i < SESSIONS; i++) {
      const session = await t.brain.create({ harness: "inline" });
      const turn = await session.prompt("flood");
      const native = t.store.paths(session.id).native;
      await expect.poll(() => existsSync(join(native, "ready")), { timeout: 30_000 }).toBe(true);
      flooders.push({ session, turn, native });
    }
    // Every log idle: the next fsync taken is the log of the session told to go.
    await expect.poll(() => flooders.every((f) => waiting(f.session) === 0), { timeout: 30_000 }).toBe(true);
    const releases: (() => void)[] = [];
    let most = 0;
    const heldBack = () => {
      most = Math.max(most, factory.heldBackBytes());
      return most;
    };
    let whole = 0;
    let written = 0;
    try {
      for (const { session, native } of flooders) {
        const syncs = io.counts[io.durable];
        releases.push(io.holdDurable());
        writeFileSync(join(native, "go"), "");
        await expect.poll(() => io.counts[io.durable], { timeout: 30_000 }).toBeGreaterThan(syncs);
        // It writes its whole flood (its frames held back, its log at its bound), or stops on the paused pipe.
        const progress = () => {
          heldBack();
          return progressIn(native);
        };
        written = await blocked(session, progress);
        // A stall of a loaded machine stands it still too: the pause comes only once the bound is passed.
        for (let tries = 0; written < READ_AHEAD_FLOOD && heldBack() <= BUDGET && tries < 10; tries++)
          written = await blocked(session, progress);
        if (written < READ_AHEAD_FLOOD) break;
        whole++;
      }
      // Several sessions were held back whole before the host's bound paused the stdout for the next one.
      expect(whole).toBeGreaterThanOrEqual(2);
      expect(written).toBeLessThan(READ_AHEAD_FLOOD);
      expect(heldBack()).toBeGreaterThan(BUDGET);
      expect(heldBack()).toBeLessThanOrEqual(BUDGET + PIPE_CHUNK + FRAME);
      for (const { session } of flooders)
        expect(waiting(session)).toBeLessThanOrEqual(BACKLOG_BYTES + PIPE_CHUNK);
    } finally {
      for (const release of releases) release();
    }
    // The sessions not told to go yet flood now, with nothing held.
    for (const { native } of flooders.slice(whole + 1)) writeFileSync(join(native, "go"), "");
    for (const { session, turn } of flooders) {
      expect((await turn.settled).status).toBe("completed");
      expectWholeFlood(await events(session), READ_AHEAD_FLOOD);
    }
    expect(factory.heldBackBytes()).toBe(0);
    const after = await flooders[0]!.session.prompt("after");
    expect((await after.settled).status).toBe("completed");
  }, 240_000);
});

describe("a shared runner's host read-ahead option", () => {
  it("is refused unless a whole number of bytes above 0, naming the option and its default", () => {
    for (const bad of [0, -1, 1.5, Number.NaN])
      expect(() => floodingRunner(true, READ_AHEAD_FLOOD, undefined, { hostReadAheadBytes: bad })).toThrow(
        `harness "inline": hostReadAheadBytes must be a whole number of bytes > 0 (the default is ${HOST_READ_AHEAD_BYTES}), got ${bad}`,
      );
  });
});
