// A late wait on a request of several questions finds their answers in the log by reading it once from the first
// question on: before, it read from there to the log's end twice (the questions' keys, then their answers), however
// long the log had grown since.
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import type { EventLog } from "../../core/event-log.js";
import type { NewEvent } from "../../protocol/events.js";
import { FsSessionStore } from "../../store/fs/session-store.js";
import { answeredInLog, HITL_LOOKBACK_EVENTS } from "./log-lookup.js";

let home: string;

beforeEach(async () => {
  home = await fs.mkdtemp(path.join(os.tmpdir(), "brain-hitl-lookup-"));
});

afterEach(async () => {
  await fs.rm(home, { recursive: true, force: true });
});

const deltas = (n: number): NewEvent[] =>
  Array.from({ length: n }, () => ({ type: "assistant.delta", turn: "t1", data: { text: "." } }));

/** The log, and the seqs of every event each of its reads gave. */
function counted(log: EventLog): { log: EventLog; seen: number[] } {
  const seen: number[] = [];
  const reading: EventLog = Object.create(log);
  reading.read = async (after, limit) => {
    const page = await log.read(after, limit);
    for (const event of page) seen.push(event.seq);
    return page;
  };
  return { log: reading, seen };
}

it("reads the events from the first question to its answers once each way, and past them a page at most", async () => {
  const store = new FsSessionStore(home);
  const { id } = await store.create({ harness: "scripted", config: {} });
  const log = await store.openLog(id);
  try {
    const apart = 2 * HITL_LOOKBACK_EVENTS + 500;
    const after = HITL_LOOKBACK_EVENTS - 100;
    await log.append([
      { type: "turn.started", turn: "t1", data: {} },
      { type: "question.requested", turn: "t1", data: { id: "q", question: "Colour?", request: "q" } },
      { type: "question.requested", turn: "t1", data: { id: "q#2", question: "Size?", request: "q" } },
    ]);
    await log.append(deltas(apart));
    const [first] = await log.append([
      { type: "question.answered", turn: "t1", data: { id: "q", answer: "red" } },
      { type: "question.answered", turn: "t1", data: { id: "q#2", answer: "large" } },
    ]);
    await log.append(deltas(after));
    const { log: reading, seen } = counted(log);
    await expect(answeredInLog(reading, "q")).resolves.toMatchObject({
      requestId: "q",
      status: "answered",
      answers: { "Colour?": "red", "Size?": "large" },
    });
    const lastAnswer = first!.seq + 1;
    const recent = seen.filter((seq) => seq > log.lastSeq - HITL_LOOKBACK_EVENTS).length;
    const times = new Map<number, number>();
    for (const seq of seen) times.set(seq, (times.get(seq) ?? 0) + 1);
    // Past the answers, the page of the log's last events that found the answer, and the rest of the page that
    // gathered the answers: no pass to the log's end for the questions' keys.
    expect(seen.filter((seq) => seq > lastAnswer).length).toBeLessThanOrEqual(after + HITL_LOOKBACK_EVENTS);
    // Between the first question and the answers: found going back, then their answers gathered going forward.
    const most = Math.max(
      ...[...times].filter(([seq]) => seq <= first!.seq - HITL_LOOKBACK_EVENTS).map(([, n]) => n),
    );
    expect(most).toBe(2);
    expect(seen.length).toBeLessThanOrEqual(recent + 2 * (lastAnswer - 1));
  } finally {
    await log.close();
  }
});
