// The durable, append-only event log of one session. Implementations: src/store/fs (embedded), later NATS.
import type { NewEvent, SessionEvent } from "../protocol/events.js";
import { readBeforeDamage } from "./errors.js";

/**
 * The bytes of events a page (a read with a limit) holds at most, past its first event. Counted in events alone, a
 * page of a log of large events (prompts and tool results of megabytes) is as large as its count allows: a few
 * watchers catching up on such a log (SSE reads 1000 a page, GET …/log up to 10000) would run the daemon out of
 * memory.
 */
export const PAGE_BYTES = 16 << 20;

export interface EventLog {
  readonly session: string;
  /** The seq of the last durable event (0 when empty). */
  readonly lastSeq: number;
  /**
   * Gives the events the next dense seqs at once (in call order) and resolves once they are durable
   * (written and fdatasync'd in a group commit). Readers and subscribers see an event only once durable.
   * Rejects with the disk's error; the log then holds none of that batch, nor of the appends already queued
   * behind it (they fail with the same error: written after a gap they would hide it), and stays appendable.
   * With `deferred`, the events may wait (a few ms at most) to be written with the next append's commit instead
   * of starting one: for an event nothing waits on, whose commit would otherwise delay the next one.
   */
  append(events: NewEvent[], options?: AppendOptions): Promise<SessionEvent[]>;
  /**
   * The first seq the log still holds, for logs whose retention can archive or drop their oldest events (absent:
   * 1). A read after a cursor before it reads on from it: the events in between are gone.
   */
  readonly firstSeq?: number;
  /**
   * Durable events with seq > after, in order (at most `limit`). A read with a limit is a page: it may end early,
   * once it holds about PAGE_BYTES past its first event, so readers page on from the last event they got.
   */
  read(after: number, limit?: number): Promise<SessionEvent[]>;
  /**
   * The requests still waiting for an answer (their request events, in log order) and the turns started but not
   * settled, as of the last durable event: what reopening a session needs, without reading the whole log. A log
   * that does not keep it leaves it out, and the session reads the log from the start instead.
   */
  openState?(): { requests: SessionEvent[]; openTurns: string[] } | undefined;
  /**
   * Calls `listener` with each batch as it becomes durable (a large commit may come as several batches, in
   * order). Returns the unsubscribe function.
   */
  subscribe(listener: (events: SessionEvent[]) => void): () => void;
  /**
   * Calls `listener` once if this process loses the right to write the log (cluster mode: its lease expired
   * or another node wrote it). The host then stops the session here. Logs that cannot lose it leave it out.
   */
  onRevoked?(listener: (err: Error) => void): () => void;
  /** Flushes what is queued and closes the file. */
  close(): Promise<void>;
  /**
   * How far the log's writes are behind its appends, for a harness's reader to pause on (see Backlog). A log whose
   * appends are not held in this process's memory while they wait leaves it out.
   */
  readonly pending?: PendingWrites;
}

/** The appends a log holds in memory until they are durable. */
export interface PendingWrites {
  /** About how many bytes of events were appended and are neither durable nor failed yet. */
  readonly bytes: number;
  /** Calls `listener` each time a commit ends (durable or failed); returns the unsubscribe function. */
  onCommitted(listener: () => void): () => void;
}

export interface AppendOptions {
  deferred?: boolean;
  /**
   * The caller can do nothing until these events are durable (a harness blocked on its tool call): a log may
   * then make them durable on the calling thread rather than hand the write to another, while nothing else of
   * its process is writing.
   */
  awaited?: boolean;
  /**
   * The caller does not read the events the promise resolves with (a harness's stream of deltas): a log may
   * resolve it with none, so that it need not hold a large commit's events until all of them are delivered.
   */
  ignoreResult?: boolean;
}

/**
 * The subscribers of one log: each durable batch goes to every one of them. One that throws is reported as a
 * warning naming the log (`where`), and neither stops the log nor starves the others.
 */
export class LogSubscribers {
  private readonly listeners = new Set<(events: SessionEvent[]) => void>();

  constructor(private readonly where: () => string) {}

  /** Adds `listener`; returns the unsubscribe function. */
  add(listener: (events: SessionEvent[]) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  notify(events: SessionEvent[]): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(events);
      } catch (err) {
        process.emitWarning(
          `${this.where()}: subscriber threw: ${err instanceof Error ? err.message : String(err)}`,
        );
      }
    }
  }

  clear(): void {
    this.listeners.clear();
  }
}

/**
 * Calls `visit` with every durable event of `log`, in order, a page at a time: for readers that fold the whole log
 * into something small (its requests, its keys), which must not hold a log of megabyte prompts in memory at once.
 * `visit` returning false stops the walk there: a log damaged after that point then reads (see pageBeforeDamage).
 */
export async function forEachEvent(
  log: Pick<EventLog, "read">,
  visit: (event: SessionEvent) => unknown,
): Promise<void> {
  for (let after = 0; ; ) {
    const page = await pageBeforeDamage(() => log.read(after, FOLD_PAGE_EVENTS));
    if (page.length === 0) return;
    for (const event of page) if (visit(event) === false) return;
    after = page.at(-1)!.seq;
  }
}

/**
 * A page read by `read`, or, when a damaged line of the log ended it, the events before that line: the page after
 * them starts at the damage and fails, so a reader that pages on to the end fails as before, and one that stops
 * sooner (at a fork's checkpoint) or a client paging a log (GET …/log) gets what is good.
 */
export async function pageBeforeDamage(read: () => Promise<SessionEvent[]>): Promise<SessionEvent[]> {
  try {
    return await read();
  } catch (err) {
    const readable = readBeforeDamage(err);
    if (readable.length === 0) throw err;
    return readable;
  }
}

/** Events per page of forEachEvent (a page also ends at PAGE_BYTES). */
const FOLD_PAGE_EVENTS = 1000;
