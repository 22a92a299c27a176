// A takeover reads the session's log once: the pass that finds the checkpoint to restore also gathers what is
// open (requests, turns), which the core's open takes from the log rather than reading it all again.
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { forEachEvent } from "../../core/event-log.js";
import type { NewEvent } from "../../protocol/events.js";
import { useNatsCluster } from "../../testing/nats-bed.js";
import { LogReader } from "./log-read.js";

const nats = useNatsCluster();

afterEach(() => {
  vi.restoreAllMocks();
});

describe("a cluster takeover's reads", () => {
  it("reads the log one page at a time, once, and hands the core its open requests and turns", async () => {
    const [a, b] = await nats.twoNodes("scan");
    await a.store.create({ id: "s1", harness: "process", config: { model: "m1" } });
    const first = await a.store.openLog("s1");
    // A checkpoint the log records: the takeover reads the log to find which one to restore.
    const files = [{ path: "state.txt", size: 2, append_only: false }];
    await writeFile(path.join(a.store.paths("s1").native, "state.txt"), "v1");
    const made = await a.store.checkpoints("s1").create(a.store.paths("s1").native, files);
    const deltas: NewEvent[] = Array.from({ length: 2500 }, () => ({
      type: "assistant.delta",
      turn: "t1",
      data: { text: "x" },
    }));
    await first.append([
      { type: "turn.started", turn: "t1", data: {} },
      { type: "question.requested", turn: "t1", data: { id: "q1", question: "which?" } },
      ...deltas,
      { type: "checkpoint.created", data: { id: made.id, files } },
    ]);
    await first.close();

    const reads = vi.spyOn(LogReader.prototype, "read");
    const log = await b.store.openLog("s1");
    // What core/session.ts's open reads: the log's open state, else the whole log.
    const state = log.openState?.();
    if (!state) await forEachEvent(log, () => {});
    // 2503 events, 1000 a page: three pages and the empty one that ends the pass.
    expect(reads).toHaveBeenCalledTimes(4);
    expect(state?.openTurns).toEqual(["t1"]);
    expect(state?.requests.map((e) => [e.type, (e.data as { id: string }).id])).toEqual([
      ["question.requested", "q1"],
    ]);
    await log.append([{ type: "question.answered", turn: "t1", data: { id: "q1", answer: "a" } }]);
    expect(log.openState()).toBeUndefined(); // past what the open read: the log is read again
    await log.close();
  });
});
