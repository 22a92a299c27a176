// One watcher's event stream: `id:` is the event's seq, so a client that reconnects with Last-Event-ID (or
// ?after=) gets exactly what came after. It catches up from the durable log, paced by the socket ('drain'),
// then tails live batches, one coalesced write per tick.
//
// A watcher whose unsent bytes pass the bound stops getting live events: it is fed from the log again at the
// pace its socket drains, so what the daemon holds for it stays bounded and neither the session nor the other
// watchers ever wait for it. One that does not drain at all for `stallMs` is disconnected; it resumes from
// its last id with nothing lost. (Cutting off every watcher that is briefly behind, as on a burst bigger than
// the bound, would make healthy clients reconnect for nothing.)
import type { SessionEvent } from "../../protocol/events.js";
import type { TickFlusher } from "./flusher.js";
import {
  type FeedHub,
  type FeedListener,
  type FormattedBatch,
  formatDropped,
  formatEvent,
  type SseItem,
} from "./hub.js";

/** The part of a Node ServerResponse the stream uses (a fake in unit tests). */
export interface SseSink {
  write(chunk: string): boolean;
  readonly writableLength: number;
  readonly destroyed: boolean;
  once(event: "drain" | "close", listener: () => void): unknown;
  removeListener(event: "drain" | "close", listener: () => void): unknown;
  end(): void;
  destroy(): void;
}

export interface SseLimits {
  /**
   * Unsent bytes past which a watcher gets no more live events, only log reads paced by its socket; a replay
   * writes about this much before it waits for the socket to drain.
   */
  maxBufferBytes: number;
  /** A watcher whose socket does not drain for this long is disconnected. */
  stallMs: number;
  /**
   * The most events per log read while catching up. A read asks for about maxBufferBytes of events the size of
   * the page before it, and the first for FIRST_PAGE: a page of 1000 events of megabytes each is gigabytes.
   */
  pageSize: number;
  /** Live events held while catching up; past this they are dropped and read back from the log instead. */
  maxHeld: number;
}

/** Events in a replay's first log read, before their size is known. */
export const FIRST_PAGE = 16;

/** Characters of live events held while catching up, as a multiple of maxBufferBytes (past it: read back). */
const HELD_BUFFERS = 16;

export const DEFAULT_SSE_LIMITS: SseLimits = {
  maxBufferBytes: 1 << 20,
  stallMs: 30_000,
  pageSize: 1000,
  maxHeld: 10_000,
};

export type CloseReason = "client" | "slow" | "ended" | "error";

export class SseStream implements FeedListener {
  /** The seq of the last event queued for this watcher. */
  private cursor: number;
  private chunks: string[] = [];
  private catching = false;
  private again = false;
  /** Events may be missing from what was held: the next catch-up reads the log. */
  private needLog = false;
  private held: SseItem[] = [];
  private heldChars = 0;
  private missed = false;
  private closed = false;
  /** Whether the replay has checked the cursor against what the log still holds. */
  private firstRead = true;
  /** The first seq the last `dropped` message named: retention dropping more later is told again. */
  private toldFirst = 0;
  private unlisten: (() => void) | undefined;
  /** Times this watcher fell behind live and was fed from the log instead. */
  behind = 0;

  constructor(
    private readonly sink: SseSink,
    private readonly hub: FeedHub,
    private readonly session: string,
    after: number,
    private readonly flusher: TickFlusher,
    private readonly limits: SseLimits,
    private readonly onClose: (reason: CloseReason) => void = () => {},
    private readonly shown: (text: string) => string = (text) => text,
  ) {
    this.cursor = after;
    sink.once("close", () => this.close("client"));
  }

  get lastSeq(): number {
    return this.cursor;
  }

  /** Subscribes first, then replays: an event committed in between is either read or held, never missed. */
  async start(): Promise<void> {
    this.unlisten = this.hub.listen(this.session, this);
    await this.catchUp(false);
  }

  events(batch: SessionEvent[], formatted: FormattedBatch): void {
    if (this.closed || batch.length === 0) return;
    if (this.catching) {
      if (this.missed) return;
      for (const item of formatted.items()) {
        this.held.push(item);
        this.heldChars += item.text.length;
      }
      const maxChars = HELD_BUFFERS * this.limits.maxBufferBytes;
      if (this.held.length > this.limits.maxHeld || this.heldChars > maxChars) {
        this.takeHeld();
        this.missed = true;
      }
      return;
    }
    if (batch[0]!.seq > this.cursor) {
      // Up to date: the batch's one text, shared with every other such watcher, instead of its messages.
      this.chunks.push(formatted.text());
      this.cursor = batch[batch.length - 1]!.seq;
      this.flusher.mark(this);
    } else if (this.enqueue(formatted.items())) this.flusher.mark(this);
  }

  attached(): void {
    void this.catchUp(false);
  }

  ended(): void {
    this.close("ended");
  }

  /** A comment line (heartbeat): keeps proxies from timing the stream out and finds dead peers. */
  comment(text: string): void {
    if (this.closed) return;
    this.chunks.push(`: ${text}\n\n`);
    this.flusher.mark(this);
  }

  flush(): void {
    if (this.closed || this.chunks.length === 0) return;
    const text = this.chunks.length === 1 ? this.chunks[0]! : this.chunks.join("");
    this.chunks = [];
    this.sink.write(text);
    if (!this.catching && this.sink.writableLength > this.limits.maxBufferBytes) {
      this.behind += 1;
      void this.catchUp(true);
    }
  }

  close(reason: CloseReason): void {
    if (this.closed) return;
    this.closed = true;
    this.chunks = [];
    this.takeHeld();
    this.flusher.forget(this);
    this.unlisten?.();
    if (!this.sink.destroyed) {
      if (reason === "slow" || reason === "error") this.sink.destroy();
      else this.sink.end();
    }
    this.onClose(reason);
  }

  private enqueue(items: SseItem[]): boolean {
    let queued = false;
    for (const item of items) {
      if (item.seq <= this.cursor) continue;
      this.chunks.push(item.text);
      this.cursor = item.seq;
      queued = true;
    }
    return queued;
  }

  /**
   * Catches the watcher up, then goes live. From the log when events may be missing (the first replay, a new
   * log attached, more held than `maxHeld`); otherwise from what was held while it waited, the very objects
   * the other watchers got, so falling behind on a burst costs no log read and no second serialization.
   * `drainFirst`: the socket is full; wait for it before writing anything.
   */
  private async catchUp(drainFirst: boolean): Promise<void> {
    if (!drainFirst) this.needLog = true;
    if (this.catching) {
      this.again = true;
      return;
    }
    this.catching = true;
    try {
      if (drainFirst) await this.drained();
      do {
        if (this.closed) return;
        this.again = false;
        if (this.needLog || this.missed) {
          this.needLog = false;
          this.missed = false;
          this.takeHeld(); // all in the log, read next
          if (this.firstRead) {
            this.firstRead = false;
            const first = await this.hub.firstSeq(this.session);
            if (this.closed) return;
            if (this.tellDropped(first)) await this.writePaced();
          }
          await this.replayLog();
          if (this.closed) return;
        }
        while (this.held.length > 0 && !this.missed && !this.closed) {
          this.enqueue(this.takeHeld());
          await this.writePaced();
        }
      } while (this.again || this.missed || this.needLog);
      this.catching = false;
      if (this.held.length > 0 && this.enqueue(this.takeHeld())) this.flusher.mark(this);
    } catch (err) {
      // A comment line (no wire change: clients skip it) says why before the cut: a log damaged in the middle
      // names its file and byte, and the way out, to anyone reading the stream by hand.
      this.sink.write(`: error: ${this.shown((err as Error).message).replace(/[\r\n]+/g, " ")}\n\n`);
      this.close("error");
    }
  }

  /**
   * Everything the log holds after the cursor, about maxBufferBytes at a time: what waits for a socket that does
   * not drain is that much unsent and one page's events, never a page of pageSize events whatever their size.
   */
  private async replayLog(): Promise<void> {
    const max = this.limits.maxBufferBytes;
    let limit = Math.min(FIRST_PAGE, this.limits.pageSize);
    for (;;) {
      const page: (SessionEvent | undefined)[] = await this.hub.read(this.session, this.cursor, limit);
      if (this.closed || page.length === 0) return;
      const head = page[0]!.seq;
      if (head > this.cursor + 1) {
        // A gap: compaction's, or retention dropped segments since the first check (a closed session's log is
        // retired while its watchers replay it), which the watcher must be told of, not skipped past.
        const first = await this.hub.firstSeq(this.session);
        if (this.closed) return;
        this.tellDropped(Math.min(first, head));
      }
      let pageChars = 0;
      let queued = 0;
      for (let i = 0; i < page.length; i++) {
        const item = formatEvent(page[i]!);
        page[i] = undefined; // its text is queued: the event need not wait for the socket too
        pageChars += item.text.length;
        if (!this.enqueue([item])) continue;
        queued += item.text.length;
        if (queued >= max) {
          queued = 0;
          await this.writePaced();
          if (this.closed) return;
        }
      }
      await this.writePaced();
      if (this.closed) return;
      limit = Math.max(1, Math.min(this.limits.pageSize, Math.floor((max * page.length) / pageChars)));
    }
  }

  /** Queues a `dropped` message when the cursor is before `first`, unless one already named it. */
  private tellDropped(first: number): boolean {
    if (this.cursor >= first - 1 || first <= this.toldFirst) return false;
    this.toldFirst = first;
    this.chunks.push(formatDropped(this.cursor, first));
    return true;
  }

  /** What was held while catching up, taken out. */
  private takeHeld(): SseItem[] {
    const held = this.held;
    this.held = [];
    this.heldChars = 0;
    return held;
  }

  /** Writes what is queued, then waits while the socket holds more than the bound. */
  private async writePaced(): Promise<void> {
    if (this.chunks.length > 0) {
      const text = this.chunks.join("");
      this.chunks = [];
      this.sink.write(text);
    }
    if (this.sink.writableLength > this.limits.maxBufferBytes) await this.drained();
  }

  /** Resolves once the socket has drained (or closed); disconnects a watcher that stalls for stallMs. */
  private drained(): Promise<void> {
    if (this.closed || this.sink.writableLength === 0) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.sink.removeListener("drain", done);
        this.sink.removeListener("close", done);
        resolve();
      };
      const timer = setTimeout(() => {
        done();
        this.close("slow");
      }, this.limits.stallMs);
      timer.unref();
      this.sink.once("drain", done);
      this.sink.once("close", done);
    });
  }
}
