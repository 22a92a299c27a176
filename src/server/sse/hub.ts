// One feed per session for the daemon's watchers. A session's live log comes and goes (closed, reopened, the
// daemon restarted); a feed outlives it, so a watcher subscribes once and is told when a new log is attached
// and must catch up from its cursor. Reads come from the live log when there is one, else from the file.
import { type EventLog, pageBeforeDamage } from "../../core/event-log.js";
import type { SessionEvent } from "../../protocol/events.js";
import { eventJson } from "./event-json.js";

/** An event as an SSE message (`id:` is its seq), with its seq beside. */
export interface SseItem {
  seq: number;
  text: string;
}

export function formatEvent(event: SessionEvent): SseItem {
  return { seq: event.seq, text: eventText(event) };
}

/** An event as an SSE message: `id:` is its seq. */
const eventText = (event: SessionEvent): string => `id: ${event.seq}\ndata: ${eventJson(event)}\n\n`;

/**
 * Said once, before the replay, to a watcher whose cursor is before the first seq the log still holds (docs/
 * protocol.md "Dropped ranges"). No `id:`, so the client's Last-Event-ID stays the cursor it asked with.
 */
export function formatDropped(after: number, firstSeq: number): string {
  return `event: dropped\ndata: ${JSON.stringify({ after, first_seq: firstSeq })}\n\n`;
}

/** A committed batch as SSE, built once for every watcher of the batch (and only if one asks). */
export interface FormattedBatch {
  /** One message per event. */
  items(): SseItem[];
  /** All of them as one text: what a watcher that is up to date writes. */
  text(): string;
}

/**
 * A batch's SSE, made on first ask: its text straight from the events when no watcher asked for the messages
 * (one watcher that is up to date, the common case: no message objects nor array of them).
 */
class LazyBatch implements FormattedBatch {
  private messages: SseItem[] | undefined;
  private joined: string | undefined;

  constructor(private readonly batch: SessionEvent[]) {}

  items(): SseItem[] {
    this.messages ??= this.batch.map(formatEvent);
    return this.messages;
  }

  text(): string {
    if (this.joined !== undefined) return this.joined;
    let text = "";
    if (this.messages) for (const item of this.messages) text += item.text;
    else for (const event of this.batch) text += eventText(event);
    this.joined = text;
    return text;
  }
}

export interface FeedListener {
  /** A durable batch, in seq order, as the live log commits it. */
  events(batch: SessionEvent[], formatted: FormattedBatch): void;
  /**
   * A (new) live log was attached, or a follow of the log ended: events may have been appended that were never
   * delivered, or may not be readable, so the watcher reads the log from its cursor.
   */
  attached(): void;
  /** The session is gone (deleted) or the daemon is stopping: end the stream. */
  ended(): void;
}

interface Feed {
  log?: EventLog;
  unsubscribe?: () => void;
  listeners: Set<FeedListener>;
  /** Following the log another node writes (cluster mode), while there is no live log here. */
  remote?: Promise<(() => void) | undefined>;
}

/**
 * Follows a session written elsewhere from its tail on, calling `gone` if another node deletes it, `damaged` if the
 * follow ends at a damaged part of its log; undefined when the store cannot.
 */
export type RemoteFollow = (
  session: string,
  listener: (batch: SessionEvent[]) => void,
  gone: () => void,
  damaged: (err: Error) => void,
) => Promise<() => void> | undefined;

/** How long a follow that failed to start waits before it is tried again. */
const REMOTE_RETRY_MS = 500;

export class FeedHub {
  private readonly feeds = new Map<string, Feed>();

  /** @param readFile durable events after a seq of a session that has no live log, from its file. */
  constructor(
    private readonly readFile: (session: string, after: number, limit: number) => Promise<SessionEvent[]>,
    /** Cluster mode: watchers of a session another node owns follow its log through the store. */
    private readonly remoteFollow?: RemoteFollow,
    /** The first seq a session's log still holds, when retention may have taken its oldest events. */
    private readonly firstSeqOf?: (session: string) => Promise<number>,
  ) {}

  /** The first seq the session's log still holds (1 when nothing was archived or dropped). */
  async firstSeq(session: string): Promise<number> {
    const log = this.feeds.get(session)?.log;
    if (log) return log.firstSeq ?? 1;
    return (await this.firstSeqOf?.(session)) ?? 1;
  }

  /** Makes `log` the session's live log (after the daemon opened the session). */
  attach(session: string, log: EventLog): void {
    const feed = this.feed(session);
    if (feed.log === log) return;
    feed.unsubscribe?.();
    this.stopRemote(feed);
    feed.log = log;
    feed.unsubscribe = log.subscribe((batch) => this.deliver(feed, batch));
    for (const listener of [...feed.listeners]) listener.attached();
  }

  private deliver(feed: Feed, batch: SessionEvent[]): void {
    const formatted = new LazyBatch(batch);
    const { listeners } = feed;
    // A session's one watcher (the common case) is called without a copy of the set; with more, one that
    // unsubscribes another mid-delivery must not change who gets this batch.
    if (listeners.size === 1) for (const listener of listeners) listener.events(batch, formatted);
    else for (const listener of [...listeners]) listener.events(batch, formatted);
  }

  /**
   * Without a live log here, follows the log through the store (another node writes it). Once the follow is
   * in place the watchers catch up from the store again, so nothing committed while it started is missed.
   */
  private startRemote(session: string, feed: Feed): void {
    if (!this.remoteFollow || feed.log || feed.remote || feed.listeners.size === 0) return;
    let remote: Promise<(() => void) | undefined> | undefined;
    remote = (async () => {
      const stop = await this.remoteFollow!(
        session,
        (batch) => {
          if (feed.remote === remote) this.deliver(feed, batch);
        },
        // Deleted through another node: its watchers here are told the session is gone, as that node's are.
        () => {
          if (feed.remote === remote && this.feeds.get(session) === feed) this.end(session);
        },
        // The follow ended at a damaged message: its watchers read the log again, which gives them the events
        // before the damage and then fails with it, ending each stream saying where (SseStream.catchUp), as for
        // one that connects now. A new follow starts from the tail, past the damage, for a watcher past it.
        () => {
          if (feed.remote !== remote || this.feeds.get(session) !== feed) return;
          this.stopRemote(feed);
          this.startRemote(session, feed);
          for (const listener of [...feed.listeners]) listener.attached();
        },
      );
      if (feed.remote !== remote) {
        stop?.();
        return undefined;
      }
      if (stop) for (const listener of [...feed.listeners]) listener.attached();
      return stop;
    })().catch(() => {
      // NATS did not answer (between leaders, reconnecting). Left as it was, the feed would count as following
      // and never try again: its watchers, and every later one here, would get no event of it.
      if (feed.remote !== remote) return undefined;
      feed.remote = undefined;
      setTimeout(() => {
        if (this.feeds.get(session) === feed) this.startRemote(session, feed);
      }, REMOTE_RETRY_MS).unref();
      return undefined;
    });
    feed.remote = remote;
  }

  private stopRemote(feed: Feed): void {
    const remote = feed.remote;
    feed.remote = undefined;
    void remote?.then((stop) => stop?.());
  }

  /** The session's log was closed: reads go to the file until a log is attached again. */
  detach(session: string, log?: EventLog): void {
    const feed = this.feeds.get(session);
    if (!feed || (log && feed.log !== log)) return;
    feed.unsubscribe?.();
    feed.unsubscribe = undefined;
    feed.log = undefined;
    this.startRemote(session, feed);
    this.prune(session, feed);
  }

  /** The session was deleted: every watcher's stream ends. */
  end(session: string): void {
    const feed = this.feeds.get(session);
    if (!feed) return;
    feed.unsubscribe?.();
    this.stopRemote(feed);
    this.feeds.delete(session);
    for (const listener of [...feed.listeners]) listener.ended();
  }

  endAll(): void {
    for (const session of [...this.feeds.keys()]) this.end(session);
  }

  listen(session: string, listener: FeedListener): () => void {
    const feed = this.feed(session);
    feed.listeners.add(listener);
    this.startRemote(session, feed);
    return () => {
      feed.listeners.delete(listener);
      this.prune(session, feed);
    };
  }

  watchers(session: string): number {
    return this.feeds.get(session)?.listeners.size ?? 0;
  }

  /**
   * Durable events after `after`, at most `limit`. A log damaged in the middle reads up to the damage; the read
   * after, which starts there, fails (pageBeforeDamage).
   */
  read(session: string, after: number, limit: number): Promise<SessionEvent[]> {
    return pageBeforeDamage(() => this.readPage(session, after, limit));
  }

  private async readPage(session: string, after: number, limit: number): Promise<SessionEvent[]> {
    const log = this.feeds.get(session)?.log;
    if (log) {
      try {
        return await log.read(after, limit);
      } catch (err) {
        // Closed under us (the session is being closed): the file has the same events.
        if (this.feeds.get(session)?.log === log && !/is closed/.test((err as Error).message)) throw err;
      }
    }
    return this.readFile(session, after, limit);
  }

  private feed(session: string): Feed {
    let feed = this.feeds.get(session);
    if (!feed) {
      feed = { listeners: new Set() };
      this.feeds.set(session, feed);
    }
    return feed;
  }

  private prune(session: string, feed: Feed): void {
    if (!feed.log && feed.listeners.size === 0 && this.feeds.get(session) === feed) {
      this.stopRemote(feed);
      this.feeds.delete(session);
    }
  }
}
