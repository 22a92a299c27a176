import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { NewEvent } from "../../protocol/events.js";
import { JsonlEventLog } from "./jsonl-log.js";
import { IdleClock } from "./log-idle.js";

let dir: string;

beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), "brain-idle-"));
});

afterEach(async () => {
  vi.useRealTimers();
  vi.restoreAllMocks();
  await fs.rm(dir, { recursive: true, force: true });
});

const delta = (text: string): NewEvent => ({ type: "assistant.delta", turn: "t1", data: { text } });

describe("a log's idle clock", () => {
  it("is one timer for a stream of commits, not a timer per commit", async () => {
    const IDLE_MS = 60_000; // a delay nothing else of the log uses
    const log = await JsonlEventLog.open(path.join(dir, "events.jsonl"), "s1", undefined, {
      idleMs: IDLE_MS,
    });
    const setTimeoutSpy = vi.spyOn(globalThis, "setTimeout");
    try {
      for (let i = 0; i < 40; i++) await log.append([delta(`d${i}`)]);
      const idleTimers = setTimeoutSpy.mock.calls.filter((call) => call[1] === IDLE_MS).length;
      expect(idleTimers).toBeLessThanOrEqual(1);
      expect(log.lastSeq).toBe(40);
    } finally {
      await log.close();
    }
  });

  it("fires once the last use is idleMs old, however often it was used before", () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "performance"] });
    const fire = vi.fn();
    const clock = new IdleClock(100, fire);
    clock.restart();
    vi.advanceTimersByTime(60);
    clock.restart(); // used again: the deadline is now 160
    vi.advanceTimersByTime(60);
    expect(fire).not.toHaveBeenCalled();
    vi.advanceTimersByTime(40);
    expect(fire).toHaveBeenCalledTimes(1);
    clock.restart();
    clock.stop();
    vi.advanceTimersByTime(1000);
    expect(fire).toHaveBeenCalledTimes(1);
  });

  it("never fires when idleMs is infinite", () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "performance"] });
    const fire = vi.fn();
    new IdleClock(Number.POSITIVE_INFINITY, fire).restart();
    vi.advanceTimersByTime(1e9);
    expect(fire).not.toHaveBeenCalled();
  });
});
