// The cluster log's messages and how they are read. One JetStream message holds one commit (a batch of events
// with dense seqs) on the session's subject; headers give its first and last seq, so a reader finds the
// message holding seq N by bisecting the subject's stream sequences, without reading what lies before.

import type { Consumer, StoredMsg } from "@nats-io/jetstream";
import { headers, type MsgHdrs } from "@nats-io/transport-node";
import { PAGE_BYTES } from "../../core/event-log.js";
import { sleep } from "../../core/sleep.js";
import type { SessionEvent } from "../../protocol/events.js";
import { damagedLogWording, withReadable } from "../fs/errors.js";
import { APPEND, AppendAssembler, appendHeader, openAppend } from "./appends.js";
import type { NatsContext } from "./context.js";
import { errorMessage, isUnanswered, NatsStoreError, natsFailure, retrying } from "./errors.js";

export const FIRST = "Brain-First-Seq";
export const LAST = "Brain-Last-Seq";
/** Which open of the log wrote a message: a dedup hit on another writer's message is a fence, not an ack. */
export const WRITER = "Brain-Writer";
/**
 * Which commit a message belongs to: the same through the retries of one publish, new for every batch. A dedup hit
 * on the writer's own message of another batch is an earlier publish that failed and landed late, not an ack.
 */
export const BATCH = "Brain-Batch";

/**
 * Where a message sits: its stream sequence and the seqs of the events it holds; `open`, the first seq of the
 * append it ends inside (./appends.ts); `end`, the last seq readers see with it the last message.
 */
export interface MessageRef {
  streamSeq: number;
  first: number;
  last: number;
  open?: number | undefined;
  end: number;
}

/** `append`: the seqs of the append the message ends inside, when it does not end it. */
export function batchHeaders(
  first: number,
  last: number,
  writer: string,
  batch: string,
  append?: { from: number; to: number },
): MsgHdrs {
  const h = headers();
  h.set(FIRST, String(first));
  h.set(LAST, String(last));
  h.set(WRITER, writer);
  h.set(BATCH, batch);
  if (append) h.set(APPEND, appendHeader(append.from, append.to));
  return h;
}

/** Events are stored without their session (the subject says it). */
export function encodeBatch(events: SessionEvent[]): string {
  return JSON.stringify(events.map(({ session: _, ...rest }) => rest));
}

export function refOf(msg: { seq: number; header: MsgHdrs }, where: string): MessageRef {
  const first = Number(msg.header.get(FIRST));
  const last = Number(msg.header.get(LAST));
  if (!Number.isInteger(first) || !Number.isInteger(last) || first < 1 || last < first) {
    throw new NatsStoreError(
      "brain_error",
      `${where}: message ${msg.seq} has no valid ${FIRST}/${LAST} headers`,
    );
  }
  const open = openAppend(msg.header);
  if (open === undefined || open > last) return { streamSeq: msg.seq, first, last, end: last };
  return { streamSeq: msg.seq, first, last, open, end: open - 1 };
}

/**
 * The events of a message, or, when its payload is no batch of events (written by a bug or a bad node straight
 * onto the subject), an error naming the session, the stream and the message's sequence and saying what to do, as
 * the embedded store's damaged line does (../fs/errors.ts damagedLogWording). A damaged message is never skipped:
 * the events it held would be lost without a word.
 */
export function decodeBatch(
  msg: { seq: number; string(): string },
  session: string,
  where: string,
  stream: string,
): SessionEvent[] {
  const damaged = (reason: string) =>
    new NatsStoreError(
      "brain_error",
      `${where}: stream ${stream} message ${msg.seq}: ${reason}. ${damagedLogWording(session, "", `A message of a stream cannot be mended in place: keep what is good with a fork of a checkpoint taken before it (POST /v1/sessions/${session}/fork), or read it (GET /v1/sessions/${session}/log)`)}`,
      { session },
    );
  let raw: unknown;
  try {
    raw = JSON.parse(msg.string());
  } catch (err) {
    throw damaged(`not JSON (${errorMessage(err)})`);
  }
  if (!Array.isArray(raw)) throw damaged("not a batch of events");
  return raw.map((e, i) => {
    const event = e as { seq?: unknown; type?: unknown } | null;
    if (
      typeof event !== "object" ||
      event === null ||
      !Number.isSafeInteger(event.seq) ||
      typeof event.type !== "string"
    )
      throw damaged(`its item ${i} is not an event (an object with a seq and a type)`);
    return { ...event, session } as SessionEvent;
  });
}

export class LogReader {
  constructor(
    private readonly ctx: NatsContext,
    readonly session: string,
  ) {}

  private get where(): string {
    return `event log of session ${this.session}`;
  }

  /** The subject's last message (from the stream leader: what has been acknowledged), or undefined. */
  async last(): Promise<MessageRef | undefined> {
    const msg = await this.get({ last_by_subj: this.ctx.subject(this.session) });
    return msg ? refOf(msg, this.where) : undefined;
  }

  /** When the subject's last message was stored, or undefined for none. */
  async lastTime(): Promise<Date | undefined> {
    return (await this.get({ last_by_subj: this.ctx.subject(this.session) }))?.time;
  }

  /** The subject's first message the stream still holds, or undefined. */
  async first(): Promise<MessageRef | undefined> {
    const msg = await this.next(1);
    return msg ? refOf(msg, this.where) : undefined;
  }

  /** The subject's first message at or after stream sequence `from`. */
  private next(from: number): Promise<StoredMsg | null> {
    // MSG.GET answers from the stream leader; 2.9 takes next_by_subj there though the 3.4 client's type omits it.
    return this.get({ next_by_subj: this.ctx.subject(this.session), seq: from } as never);
  }

  /**
   * One message, asked again while the request goes unanswered, for as long as a publish retries through a
   * leader election (publishRetryMs): a read right after a node died or came back met the stream between
   * leaders and failed with a timeout, though nothing was lost.
   */
  private get(query: object): Promise<StoredMsg | null> {
    return retrying(
      this.ctx.publishRetryMs,
      () => this.ctx.reads.streams.getMessage(this.ctx.stream, query as never),
      isUnanswered,
      (err, tries) =>
        natsFailure(`${this.where}: read failed${tries > 1 ? ` after ${tries} tries` : ""}`, err),
    );
  }

  /** The subject's messages after stream sequence `after` up to `end`, in order. */
  async *messagesAfter(after: number, end: number): AsyncGenerator<StoredMsg> {
    for (let at = after + 1; at <= end; ) {
      const msg = await this.next(at);
      if (!msg || msg.seq > end) return;
      yield msg;
      at = msg.seq + 1;
    }
  }

  /** The stream sequence of the first message holding an event with seq > after, or undefined. */
  async locate(after: number, tail?: MessageRef): Promise<number | undefined> {
    const end = tail ?? (await this.last());
    if (!end || end.last <= after) return undefined;
    // The tail qualifies; search below it. Other sessions' messages sit between this one's, so a probe at
    // `mid` finds the subject's first message at or after it, and everything in [mid, that message) is ruled out.
    let best = end.streamSeq;
    let lo = 1;
    let hi = best - 1;
    while (lo <= hi) {
      const mid = lo + Math.floor((hi - lo) / 2);
      const msg = await this.next(mid);
      if (!msg || msg.seq > hi) {
        hi = mid - 1;
        continue;
      }
      const ref = refOf(msg, this.where);
      if (ref.last > after) {
        best = ref.streamSeq;
        hi = mid - 1;
      } else {
        lo = ref.streamSeq + 1;
      }
    }
    return best;
  }

  /**
   * Events with seq > after, in order, at most `limit`, up to `upTo` (the last acknowledged seq known). With a
   * finite limit the read is a page, ending with the message that takes it past PAGE_BYTES.
   */
  async read(after: number, limit: number, tail?: MessageRef): Promise<SessionEvent[]> {
    const end = tail ?? (await this.last());
    if (!end || end.end <= after || limit < 1) return [];
    let at = await this.locate(after, end);
    // Events of an append not complete by the tail are held, never given out (./appends.ts).
    const appends = new AppendAssembler(after);
    const out: SessionEvent[] = [];
    let budget = Number.isFinite(limit) ? PAGE_BYTES : Number.POSITIVE_INFINITY;
    while (
      at !== undefined &&
      at <= end.streamSeq &&
      out.length < limit &&
      (budget > 0 || out.length === 0)
    ) {
      const msg = await this.next(at);
      if (!msg || msg.seq > end.streamSeq) break;
      budget -= msg.data.length;
      let batch: SessionEvent[];
      try {
        batch = decodeBatch(msg, this.session, this.where, this.ctx.stream);
      } catch (err) {
        // What came before the damage goes with the error: a page, or a fork's history, may need no more.
        throw withReadable(err as Error, out);
      }
      for (const e of appends.take(refOf(msg, this.where), batch)) {
        if (out.length < limit) out.push(e);
      }
      at = msg.seq + 1;
    }
    return out;
  }

  /**
   * Calls `listener` with every batch holding events after `after` (default: the last one stored now), first
   * those stored, then each new one as it is acknowledged (an ordered consumer on the session's subject).
   * Resolves once the consumer is in place, with the stop function. A consumer that ends or fails while followed
   * (the client gives up recreating it after a long NATS outage; a listener that throws) is reported to `failed`
   * and made again from the last seq delivered: left dead, its watchers would get no event again, silently.
   * A damaged message (decodeBatch) ends the follow instead, reported to `damaged` with the last seq delivered:
   * a new consumer would meet it again, for ever.
   */
  async follow(
    after: number | undefined,
    listener: (events: SessionEvent[]) => void,
    failed: (err: unknown, seen: number, retryMs: number) => void = () => {},
    damaged: (err: Error, seen: number) => void = () => {},
  ): Promise<() => void> {
    let seen = after ?? (await this.last())?.end ?? 0;
    let stopped = false;
    let messages = await this.consume(seen);
    void (async () => {
      for (let failures = 0; ; ) {
        let err: unknown = new Error("its consumer ended");
        try {
          // A new consumer starts again at the first message holding a seq past `seen`: what was held is read again.
          const appends = new AppendAssembler(seen);
          for await (const msg of messages) {
            failures = 0;
            let events: SessionEvent[];
            try {
              const ref = refOf({ seq: msg.seq, header: msg.headers ?? headers() }, this.where);
              events = appends.take(ref, decodeBatch(msg, this.session, this.where, this.ctx.stream));
            } catch (err) {
              // Damaged: what came before it was delivered, and a consumer made again would meet it again.
              void messages.close();
              if (stopped) return;
              stopped = true;
              return damaged(err as Error, seen);
            }
            if (events.length === 0) continue;
            seen = events[events.length - 1]!.seq;
            listener(events);
          }
        } catch (thrown) {
          err = thrown;
        }
        // Made again once the wait is over; failing to make it is one more failure, reported the same way.
        for (;;) {
          // The connection closing (the node stopping) ends every consumer: nothing to make again.
          if (stopped || this.ctx.nc.isClosed() || this.ctx.nc.isDraining()) return;
          void messages.close();
          const retryMs = Math.min(FOLLOW_RETRY_MAX_MS, FOLLOW_RETRY_MS * 2 ** Math.min(failures++, 8));
          failed(err, seen, retryMs);
          await sleep(retryMs);
          if (stopped) return;
          try {
            messages = await this.consume(seen);
            // Stopped while it was being made: stop() closed the one before.
            if (stopped) return void messages.close();
            break;
          } catch (thrown) {
            err = thrown;
          }
        }
      }
    })();
    return () => {
      stopped = true;
      void messages.close();
    };
  }

  /** An ordered consumer of the session's messages holding events after seq `seen`. */
  private async consume(seen: number): Promise<Awaited<ReturnType<Consumer["consume"]>>> {
    const tail = await this.last();
    // Past the tail as it is now: any later message on the subject has a higher stream sequence.
    const start = (await this.locate(seen, tail)) ?? (tail ? tail.streamSeq + 1 : 1);
    const consumer = await this.ctx.js.consumers.get(this.ctx.stream, {
      // A single subject: the 3.4 client refuses the array form on a 2.9 server.
      filter_subjects: this.ctx.subject(this.session),
      opt_start_seq: start,
    } as never);
    return consumer.consume();
  }
}

/**
 * When a session's log was last written, and whether it never was, from one look at its subject's last message
 * (a list makes it for updated_at anyway). None there is a log nothing was written to, unless the stream's limits
 * let go of all its messages: only then is `marked` asked (the seq mark its writer sets before its first message),
 * so such a made session stays listed.
 */
export async function lookAtLog(
  reader: LogReader,
  marked: () => Promise<number>,
): Promise<{ updatedAt?: string; unwritten: boolean }> {
  const last = await reader.lastTime();
  if (last) return { updatedAt: last.toISOString(), unwritten: false };
  return { unwritten: (await marked()) === 0 };
}

/** How long a follow whose consumer failed waits before it makes a new one: doubling from this, up to the max. */
const FOLLOW_RETRY_MS = 250;
const FOLLOW_RETRY_MAX_MS = 10_000;

/** Gives `events` the seqs after `seq`, and the commit's time. */
export function numberFrom(events: SessionEvent[], seq: number, ts: string): void {
  for (const e of events) {
    e.seq = ++seq;
    e.ts = ts;
  }
}
