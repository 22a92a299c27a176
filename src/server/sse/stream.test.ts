// The SSE stream on a fake socket: one write per tick however many batches arrive, replay paced by 'drain' about
// maxBufferBytes at a time, a live watcher cut off past its buffer bound, nothing lost or doubled when the log
// reattaches mid-replay.
import { EventEmitter } from "node:events";
import { describe, expect, it, vi } from "vitest";
import type { EventLog } from "../../core/event-log.js";
import type { NewEvent, SessionEvent } from "../../protocol/events.js";
import { TickFlusher } from "./flusher.js";
import { FeedHub, formatEvent } from "./hub.js";
import { type CloseReason, DEFAULT_SSE_LIMITS, FIRST_PAGE, type SseSink, SseStream } from "./stream.js";

class FakeSink extends EventEmitter implements SseSink {
  writes: string[] = [];
  writableLength = 0;
  destroyed = false;
  ended = false;
  /** write() returns false (socket full) until drain() is called. */
  full = false;

  write(chunk: string): boolean {
    this.writes.push(chunk);
    this.writableLength += chunk.length;
    return !this.full;
  }
  end(): void {
    this.ended = true;
  }
  destroy(): void {
    this.destroyed = true;
    this.emit("close");
  }
  drain(): void {
    this.full = false;
    this.writableLength = 0;
    this.emit("drain");
  }
  seqs(): number[] {
    return [...this.writes.join("").matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]));
  }
}

/** An in-memory EventLog: append gives seqs and tells subscribers at once, like a commit. */
class MemoryLog implements EventLog {
  readonly session = "s";
  events: SessionEvent[] = [];
  private readonly listeners = new Set<(events: SessionEvent[]) => void>();
  get lastSeq() {
    return this.events.length;
  }
  async append(events: NewEvent[]): Promise<SessionEvent[]> {
    const stored = events.map(
      (e, i) => ({ ...e, seq: this.events.length + i + 1, ts: "t", session: "s" }) as SessionEvent,
    );
    this.events.push(...stored);
    for (const l of this.listeners) l(stored);
    return stored;
  }
  async read(after: number, limit = Number.POSITIVE_INFINITY): Promise<SessionEvent[]> {
    return this.events.slice(after, after + limit);
  }
  subscribe(listener: (events: SessionEvent[]) => void) {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
  async close() {}
}

const delta = (text: string): NewEvent => ({ type: "assistant.delta", turn: "t1", data: { text } });
const tick = () => new Promise((resolve) => setImmediate(resolve));

/** Whether `promise` has settled yet, read while the test drives it. */
function until(promise: Promise<unknown>): { settled: boolean } {
  const state = { settled: false };
  void promise.finally(() => {
    state.settled = true;
  });
  return state;
}

function setup(limits = DEFAULT_SSE_LIMITS, after = 0) {
  const log = new MemoryLog();
  const hub = new FeedHub(async (_, after, limit) => log.events.filter((e) => e.seq > after).slice(0, limit));
  hub.attach("s", log);
  const sink = new FakeSink();
  const reasons: CloseReason[] = [];
  const stream = new SseStream(sink, hub, "s", after, new TickFlusher(), limits, (r) => reasons.push(r));
  return { log, hub, sink, stream, reasons };
}

describe("SseStream", () => {
  it("writes every batch that arrives in one tick in one write, with id: = seq", async () => {
    const { log, sink, stream } = setup();
    await stream.start();
    expect(sink.writes).toEqual([]);
    for (let i = 0; i < 50; i++) await log.append([delta(`w${i}`)]);
    expect(sink.writes).toHaveLength(0);
    await tick();
    expect(sink.writes).toHaveLength(1);
    expect(sink.seqs()).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
    expect(sink.writes[0]).toMatch(/^id: 1\ndata: \{"type":"assistant.delta"/);
  });

  it("gives every up-to-date watcher a batch as one text, and one ahead of it only what follows its cursor", async () => {
    const { log, hub, sink, stream } = setup();
    const other = new FakeSink();
    const ahead = new FakeSink();
    const flusher = new TickFlusher();
    const streams = [
      new SseStream(other, hub, "s", 0, flusher, DEFAULT_SSE_LIMITS),
      new SseStream(ahead, hub, "s", 2, flusher, DEFAULT_SSE_LIMITS),
    ];
    await Promise.all([stream.start(), ...streams.map((s) => s.start())]);
    await log.append([delta("a"), delta("b"), delta("c")]);
    await tick();
    expect(sink.writes).toHaveLength(1);
    expect(sink.seqs()).toEqual([1, 2, 3]);
    expect(other.writes).toEqual(sink.writes);
    expect(ahead.seqs()).toEqual([3]);
  });

  it("replays from the cursor, then goes live without a gap or a double", async () => {
    const { log, sink, stream } = setup(DEFAULT_SSE_LIMITS, 3);
    for (let i = 0; i < 10; i++) await log.append([delta(`old${i}`)]);
    const started = stream.start();
    await log.append([delta("during")]); // committed while the replay reads: held, then sent once
    await started;
    await log.append([delta("after")]);
    await tick();
    expect(sink.seqs()).toEqual([4, 5, 6, 7, 8, 9, 10, 11, 12]);
  });

  it("paces a replay by 'drain' instead of buffering it, and never cuts a replaying watcher off", async () => {
    const limits = { ...DEFAULT_SSE_LIMITS, maxBufferBytes: 300, pageSize: 4 };
    const { log, sink, stream, reasons } = setup(limits);
    for (let i = 0; i < 20; i++) await log.append([delta(`e${i}`)]);
    const event = formatEvent(log.events[0]!).text.length;
    sink.full = true;
    const started = stream.start();
    await tick();
    expect(sink.seqs()).toEqual([1, 2, 3]); // about maxBufferBytes, then it waits
    const done = until(started);
    while (!done.settled) {
      // What a page had queued when the socket filled, and one more event at most.
      expect(sink.writableLength).toBeLessThan(2 * limits.maxBufferBytes + event);
      sink.full = true;
      sink.drain();
      await tick();
    }
    expect(sink.seqs()).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(reasons).toEqual([]);
  });

  it("replays about maxBufferBytes at a time whatever pageSize, reading pages of about that much", async () => {
    const limits = { ...DEFAULT_SSE_LIMITS, maxBufferBytes: 2000 };
    const { log, sink, stream } = setup(limits);
    for (let i = 0; i < 200; i++) await log.append([delta(`${i} ${"x".repeat(700)}`)]);
    const read = vi.spyOn(log, "read");
    sink.full = true;
    const done = until(stream.start());
    for (let i = 0; i < 5; i++) await tick();
    // A socket that never drains holds about maxBufferBytes, not a page of 1000 events of any size.
    expect(sink.writableLength).toBeLessThan(2 * limits.maxBufferBytes);
    expect(sink.seqs()).toEqual([1, 2, 3]);
    while (!done.settled) {
      sink.full = true;
      sink.drain();
      await tick();
    }
    expect(sink.seqs()).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));
    const limitsAsked = read.mock.calls.map(([, limit]) => limit ?? Number.POSITIVE_INFINITY);
    expect(limitsAsked[0]).toBe(FIRST_PAGE);
    expect(Math.max(...limitsAsked.slice(1))).toBe(2); // 2000 characters of events of about 800
  });

  it("keeps feeding a watcher that falls behind, at its socket's pace, in order, with no log read", async () => {
    const limits = { ...DEFAULT_SSE_LIMITS, maxBufferBytes: 1000 };
    const { log, sink, stream, reasons } = setup(limits);
    await stream.start();
    const read = vi.spyOn(log, "read");
    await log.append([delta("x".repeat(1200))]);
    await tick();
    expect(stream.behind).toBe(1); // past the bound: no more live writes
    for (let i = 0; i < 5; i++) await log.append([delta(`later${i}`)]);
    await tick();
    expect(sink.seqs()).toEqual([1]);
    sink.drain();
    await tick();
    await tick();
    expect(sink.seqs()).toEqual([1, 2, 3, 4, 5, 6]);
    await log.append([delta("live again")]);
    await tick();
    expect(sink.seqs()).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(read).not.toHaveBeenCalled(); // served from what it held, the objects every watcher shares
    expect(reasons).toEqual([]);
  });

  it("disconnects a watcher whose socket does not drain for stallMs", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    try {
      const limits = { ...DEFAULT_SSE_LIMITS, maxBufferBytes: 1000, stallMs: 5000 };
      const { log, sink, stream, reasons } = setup(limits);
      await stream.start();
      await log.append([delta("x".repeat(1200))]);
      await tick();
      vi.advanceTimersByTime(4999);
      expect(sink.destroyed).toBe(false);
      vi.advanceTimersByTime(2);
      expect(sink.destroyed).toBe(true);
      expect(reasons).toEqual(["slow"]);
      expect(stream.lastSeq).toBe(1);
    } finally {
      vi.useRealTimers();
    }
  });

  it("catches up from the log when a new log is attached (the session reopened)", async () => {
    const { log, hub, sink, stream } = setup();
    await stream.start();
    hub.detach("s", log);
    await log.append([delta("while detached")]); // not delivered live
    await tick();
    expect(sink.seqs()).toEqual([]);
    hub.attach("s", log);
    await tick();
    await tick();
    expect(sink.seqs()).toEqual([1]);
  });

  it("drops what it holds past maxHeld during a replay and reads it back from the log instead", async () => {
    const limits = { ...DEFAULT_SSE_LIMITS, maxBufferBytes: 100, pageSize: 2, maxHeld: 3 };
    const { log, sink, stream } = setup(limits);
    for (let i = 0; i < 4; i++) await log.append([delta(`old${i}`)]);
    sink.full = true;
    const started = stream.start();
    for (let i = 0; i < 10; i++) await log.append([delta(`new${i}`)]);
    const done = until(started);
    while (!done.settled) {
      sink.full = true;
      sink.drain();
      await tick();
    }
    await tick();
    expect(sink.seqs()).toEqual(Array.from({ length: 14 }, (_, i) => i + 1));
  });

  it("drops what it holds past 16 times maxBufferBytes while behind and reads it back from the log", async () => {
    const limits = { ...DEFAULT_SSE_LIMITS, maxBufferBytes: 1000 };
    const { log, sink, stream, reasons } = setup(limits);
    await stream.start();
    const read = vi.spyOn(log, "read");
    await log.append([delta("x".repeat(1200))]);
    await tick();
    expect(stream.behind).toBe(1);
    // 20 KB held past 16 KB: dropped, then read back from the log once the socket drains.
    for (let i = 0; i < 20; i++) await log.append([delta(`${i} ${"y".repeat(1000)}`)]);
    expect(read).not.toHaveBeenCalled();
    while (sink.seqs().length < 21) {
      sink.drain();
      await tick();
    }
    expect(sink.seqs()).toEqual(Array.from({ length: 21 }, (_, i) => i + 1));
    expect(read).toHaveBeenCalled();
    expect(reasons).toEqual([]);
  });

  it("ends the stream when the session is deleted, and sends heartbeats as comments", async () => {
    const { hub, sink, stream, reasons } = setup();
    await stream.start();
    stream.comment("ping");
    await tick();
    expect(sink.writes).toEqual([": ping\n\n"]);
    hub.end("s");
    expect(sink.ended).toBe(true);
    expect(reasons).toEqual(["ended"]);
  });
});
