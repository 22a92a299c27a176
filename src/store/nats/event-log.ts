// The cluster event log: a session's events on its own subject of the events stream. Group commit as on disk:
// appends made in one tick form one batch, published as one message (split only past the size limit; an append
// cut in two is seen only once whole: ./appends.ts) with the id `<session>:<first seq>` (a retried publish is
// dropped as a duplicate; a Brain-Batch header tells a retry from an earlier failed batch that landed late) and
// the expected last sequence of the subject (a stale writer's publish is refused: it is fenced). Events reach
// readers and subscribers only once JetStream has acknowledged them, with the seqs the log holds them at.
import { randomUUID } from "node:crypto";
import { type EventLog, LogSubscribers } from "../../core/event-log.js";
import type { NewEvent, SessionEvent } from "../../protocol/events.js";
import type { OpenState } from "../fs/log-state.js";
import { AppendAssembler } from "./appends.js";
import { BatchCuts } from "./batch-cuts.js";
import type { NatsContext } from "./context.js";
import {
  errorMessage,
  fenced,
  isRefusedForLimits,
  isWrongLastSequence,
  NatsStoreError,
  natsFailure,
  refusedByStream,
  retrying,
} from "./errors.js";
import { PendingAppends, type QueuedAppend, toStored } from "./log-pending.js";
import {
  BATCH,
  batchHeaders,
  decodeBatch,
  encodeBatch,
  LogReader,
  type MessageRef,
  numberFrom,
  refOf,
  WRITER,
} from "./log-read.js";
import { SeqReservation } from "./seq-mark.js";
import { EventTail, type TailBudget, type TailHolder } from "./tail-budget.js";

/** What an append may find: a lease this open holds (src/store/nats/lease.ts), checked before each commit. */
export interface WriteGuard {
  /** Throws (code `locked`) when this node may no longer write the session. */
  check(): void;
}

export class NatsEventLog implements EventLog, TailHolder {
  private queue: QueuedAppend[] = [];
  /** The bytes of the appends queued or being published: a harness's reader pauses on them (core/backlog.ts). */
  readonly pending = new PendingAppends();
  private flushing: Promise<void> | undefined;
  private closing: Promise<void> | undefined;
  private durableSeq: number;
  /** A publish failed without an answer: it may have been stored, so the next commit asks the stream first. */
  private uncertain = false;
  private tailRef: MessageRef | undefined;
  /** Events stored past durableSeq, of an append whose later messages are not (./appends.ts). */
  private held: SessionEvent[] = [];
  private readonly tail = new EventTail();
  private fence: NatsStoreError | undefined;
  /** How many events of the batch being committed are stored (and delivered). */
  private landed = 0;
  private readonly subscribers = new LogSubscribers(() => this.where);
  private readonly revokedListeners = new Set<(err: Error) => void>();
  /** This open's name, in every message it writes. */
  readonly writer = randomUUID();

  private constructor(
    private readonly ctx: NatsContext,
    readonly session: string,
    private readonly reader: LogReader,
    last: MessageRef | undefined,
    private readonly guard: WriteGuard | undefined,
    private readonly onClose: () => Promise<void>,
    private readonly incarnation: string,
    /** What the node's open logs may keep in memory between them. */
    private readonly budget: TailBudget | undefined,
  ) {
    this.tailRef = last;
    // An append another writer left incomplete is not in the log: the next append takes its seqs.
    this.durableSeq = last?.end ?? 0;
  }

  static async open(
    ctx: NatsContext,
    session: string,
    options: {
      guard?: WriteGuard;
      onClose?: () => Promise<void>;
      incarnation?: string;
      budget?: TailBudget;
      /** What is open as of seq `seq`, from a read of the whole log the opener made anyway (a takeover's). */
      opened?: OpenState & { seq: number };
    } = {},
  ): Promise<NatsEventLog> {
    const reader = new LogReader(ctx, session);
    const last = await reader.last();
    const { guard, incarnation = "", budget } = options;
    const seqs = await SeqReservation.open(ctx.records, session, incarnation, last);
    const onClose = options.onClose ?? (async () => {});
    const log = new NatsEventLog(ctx, session, reader, last, guard, onClose, incarnation, budget);
    [log.seqs, log.opened] = [seqs, options.opened];
    // No message left: the seqs go on after those reserved, as none of the stream let go of went past them.
    if (!last && seqs.reserved > 0) [log.durableSeq, log.firstSeq] = [seqs.reserved, seqs.reserved + 1];
    return log;
  }

  /** The first seq the log holds, when the stream had let go of every message it had at the open. */
  firstSeq: number | undefined;
  private seqs: SeqReservation | undefined;
  private opened: (OpenState & { seq: number }) | undefined;

  /** The open state the opener read, while nothing was written since: reopening needs no second read. */
  openState(): OpenState | undefined {
    return this.opened?.seq === this.durableSeq ? this.opened : undefined;
  }

  get lastSeq(): number {
    return this.durableSeq;
  }

  /** Why this log refuses appends, once fenced (another owner wrote, or the lease was lost). */
  get fencedBy(): NatsStoreError | undefined {
    return this.fence;
  }

  /** Refuses every later append with `err` (the lease was lost: this node must stop writing). */
  revoke(err: NatsStoreError): void {
    if (this.fence) return;
    this.fence = err;
    for (const listener of [...this.revokedListeners]) listener(err);
    this.revokedListeners.clear();
  }

  onRevoked(listener: (err: Error) => void): () => void {
    if (this.fence) {
      listener(this.fence);
      return () => {};
    }
    this.revokedListeners.add(listener);
    return () => this.revokedListeners.delete(listener);
  }

  append(events: NewEvent[]): Promise<SessionEvent[]> {
    if (this.closing) return Promise.reject(this.closedError());
    if (this.fence) return Promise.reject(this.fence);
    if (events.length === 0) return Promise.resolve([]);
    let stored: ReturnType<typeof toStored>;
    try {
      // Seq and ts are the commit's, given when the batch is published.
      stored = toStored(events, this.session);
    } catch (err) {
      return Promise.reject(
        new NatsStoreError("bad_request", `${this.where}: event not serializable: ${errorMessage(err)}`),
      );
    }
    return new Promise((resolve, reject) => {
      const append = { ...stored, resolve, reject };
      this.queue.push(append);
      this.pending.add(append);
      // A microtask: appends made in this tick join one publish; later ones queue behind it.
      this.flushing ??= Promise.resolve().then(() => this.flushLoop());
    });
  }

  async read(after: number, limit = Number.POSITIVE_INFINITY): Promise<SessionEvent[]> {
    if (this.closing) throw this.closedError();
    if (!Number.isInteger(after) || after < 0 || !(limit >= 0)) {
      throw new NatsStoreError("bad_request", `${this.where}: bad read range after=${after} limit=${limit}`);
    }
    if (after >= this.durableSeq || limit < 1) return [];
    const first = this.tail.events[0];
    if (first && after + 1 >= first.seq) {
      const from = this.tail.events.filter((e) => e.seq > after);
      return Number.isFinite(limit) ? from.slice(0, Math.floor(limit)) : from;
    }
    return this.reader.read(after, limit, this.tailRef);
  }

  subscribe(listener: (events: SessionEvent[]) => void): () => void {
    return this.subscribers.add(listener);
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      while (this.flushing) await this.flushing;
      this.subscribers.clear();
      this.dropTail();
      await this.onClose();
    })();
    return this.closing;
  }

  private get where(): string {
    return `event log of session ${this.session}`;
  }
  private closedError(): NatsStoreError {
    return new NatsStoreError("brain_error", `${this.where} is closed`);
  }

  private async flushLoop(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue;
      this.queue = [];
      this.landed = 0;
      try {
        this.guard?.check();
        if (this.fence) throw this.fence;
        if (this.uncertain) await this.resync();
        await this.commit(batch.map((p) => p.events));
      } catch (err) {
        // As on disk: the appends queued behind a failed batch may continue it and fail with it.
        const behind = this.queue;
        this.queue = [];
        const error = err instanceof NatsStoreError ? err : natsFailure(`${this.where}: append failed`, err);
        if (error.code === "locked") this.revoke(error);
        // The appends whose events were all stored (and delivered) before a later message of the batch failed
        // succeeded: failed, they were retried, and their events logged twice. The one cut short is not seen.
        let stored = this.landed;
        for (const p of [...batch, ...behind]) {
          stored = stored >= p.events.length ? stored - p.events.length : -1;
          if (stored >= 0) p.resolve(p.events);
          else p.reject(error);
        }
        this.pending.settled([...batch, ...behind]);
        continue;
      }
      for (const p of batch) p.resolve(p.events);
      this.pending.settled(batch);
    }
    this.flushing = undefined;
  }

  private async commit(appends: SessionEvent[][]): Promise<void> {
    const events = appends.flat();
    const spans: { from: number; to: number }[] = []; // each event's append: the indexes of its ends
    for (const a of appends) {
      const span = { from: spans.length, to: spans.length + a.length - 1 };
      for (let i = 0; i < a.length; i++) spans.push(span);
    }
    const [ts, batch, sizeOf] = [new Date().toISOString(), randomUUID(), new Map<SessionEvent, number>()];
    numberFrom(events, this.durableSeq, ts);
    const cuts = new BatchCuts(events, this.where, this.ctx);
    for (let cut = cuts.next(); cut; cut = cuts.next()) {
      const { events: chunk, sizes, at } = cut;
      for (const [i, e] of chunk.entries()) sizeOf.set(e, sizes[i]!);
      const span = spans[at + chunk.length - 1]!;
      // Each message lands after the last one this writer knows of; an earlier publish of its own that failed
      // and landed late takes those seqs first, and the batch follows it. Past its first message, the batch's
      // seqs are in the log and stay: a message of this writer's between them is none it knows of.
      let sent: boolean | "recut";
      for (;;) {
        if (at === 0) numberFrom(events, this.durableSeq, ts);
        await this.seqs?.reserve(chunk[chunk.length - 1]!.seq);
        const open = span.to >= at + chunk.length;
        const append = open ? { from: events[span.from]!.seq, to: events[span.to]!.seq } : undefined;
        sent = await this.publish(chunk, batch, append).catch((err: unknown) => cuts.refused(err));
        if (sent) break;
        if (at > 0) this.uncertain = true;
        if (at === 0 && (await this.resync())) continue;
        throw new NatsStoreError(
          "brain_error",
          `${this.where}: the stream refused seq ${chunk[0]!.seq} as a repeat or out of order${at > 0 ? ", in the middle of a batch" : `, yet holds no message past stream message ${this.tailRef?.streamSeq ?? 0}`}`,
        );
      }
      if (sent === "recut") continue;
      // Delivered message by message, whole appends only: a later message of the batch may fail.
      const appendsDone = new AppendAssembler(this.durableSeq, this.held);
      const whole = appendsDone.take(this.tailRef!, chunk);
      [this.durableSeq, this.held] = [appendsDone.shown, appendsDone.held];
      this.landed += whole.length;
      this.delivered(whole, sizeOf);
    }
  }

  /** Events now acknowledged (`sizeOf`: each one's JSON size): into the tail and to the subscribers. */
  private delivered(durable: SessionEvent[], sizeOf: Map<SessionEvent, number>): void {
    if (durable.length === 0) return;
    const sizes = durable.map((e) => sizeOf.get(e) ?? 0);
    this.tail.push(durable, sizes);
    this.budget?.set(this, this.tail.bytes);
    this.subscribers.notify(durable);
  }

  /** Lets go of the events kept in memory: reads of them go to NATS. */
  dropTail(): void {
    this.tail.clear();
    this.budget?.set(this, 0);
  }

  /**
   * One message; retried with the same id through a leader election (the stream drops a repeat). True once it is
   * stored; false when the log has a later message of this writer's (an earlier failed publish that landed).
   */
  private async publish(chunk: SessionEvent[], batch: string, append?: { from: number; to: number }) {
    const first = chunk[0]!.seq;
    const last = chunk[chunk.length - 1]!.seq;
    const subject = this.ctx.subject(this.session);
    const body = encodeBatch(chunk);
    // A message written over an incomplete append (same seqs) is no repeat of its first message: its id names
    // the message it follows, as two writers doing so at once do alike (a dedup hit, and one is fenced).
    const over = first <= (this.tailRef?.last ?? 0) ? `~${this.tailRef!.streamSeq}` : "";
    const attempt = async () => {
      // Before every try, not only the commit's first: retries through an outage can outlast the lease, and one
      // sent once another node owns the session would be stored (nothing of the new owner's is in the log yet for
      // the expected sequence to catch) and fence that owner out of its own session.
      this.guard?.check();
      if (this.fence) throw this.fence;
      try {
        return await this.ctx.js.publish(subject, body, {
          // The id is the first seq's, so another writer's message with the same seqs is a dedup hit even when
          // both expected the same last sequence. The incarnation (the record's creation) keeps a session deleted
          // and made again with its id from being taken for a repeat of its predecessor's messages.
          msgID: `${this.session}:${first}${this.incarnation ? `@${this.incarnation}` : ""}${over}`,
          expect: { lastSubjectSequence: this.tailRef?.streamSeq ?? 0 },
          headers: batchHeaders(first, last, this.writer, batch, append),
          timeout: 5000,
        });
      } catch (err) {
        // Whose the later messages are, resync finds out (this writer's late one, or a fence).
        if (isWrongLastSequence(err)) return undefined;
        throw err;
      }
    };
    // A fence (NatsStoreError) or a refusal for the stream's limits is an answer; anything else may be the
    // cluster between leaders.
    const ack = await retrying(
      this.ctx.publishRetryMs,
      attempt,
      (err) => !(err instanceof NatsStoreError) && !isRefusedForLimits(err),
      (err, tries) => {
        if (err instanceof NatsStoreError) return err;
        // An earlier try that went unanswered may land yet: the next commit asks the stream first.
        if (tries > 1 || !isRefusedForLimits(err)) this.uncertain = true;
        if (isRefusedForLimits(err)) return err as Error; // the stream's answer, read below
        return natsFailure(`${this.where}: append failed after ${tries} tries`, err);
      },
    ).catch(async (err) => {
      if (err instanceof NatsStoreError) throw err;
      throw await refusedByStream(this.ctx, `${this.where}: append of seq ${first}-${last}`, body, err);
    });
    if (!ack) return false;
    if (ack.duplicate && !(await this.isThisBatch(ack.seq, first, batch))) return false;
    this.tailRef = {
      streamSeq: ack.seq,
      first,
      last,
      open: append?.from,
      end: append ? append.from - 1 : last,
    };
    return true;
  }

  /**
   * A duplicate id is this batch's own retry (an ack), an earlier batch of this writer that failed and landed
   * late (false: the batch goes after it), or another writer's message with the same seqs: a fence.
   */
  private async isThisBatch(streamSeq: number, first: number, batch: string): Promise<boolean> {
    const msg = await this.ctx.jsm.streams.getMessage(this.ctx.stream, { seq: streamSeq }).catch((err) => {
      this.uncertain = true;
      throw natsFailure(
        `${this.where}: append of seq ${first} is a repeat, but its original is unreadable`,
        err,
      );
    });
    if (msg?.header.get(BATCH) === batch) return true;
    if (msg?.header.get(WRITER) === this.writer) return false;
    throw fenced(this.session, `another node wrote seq ${first} first`);
  }

  /**
   * Takes in what the log holds past the last message this writer knows of: its own publishes that failed without
   * an answer but were stored after all, rejected appends notwithstanding: they are in the log, and the seqs that
   * follow must count them. Another writer's message there means this node was fenced. True if any was taken in.
   */
  private async resync(): Promise<boolean> {
    const last = await this.reader.last();
    this.uncertain = false;
    if (!last || last.streamSeq === this.tailRef?.streamSeq) return false;
    const appends = new AppendAssembler(this.durableSeq, this.held);
    const landed: SessionEvent[] = [];
    const sizeOf = new Map<SessionEvent, number>();
    for await (const msg of this.reader.messagesAfter(this.tailRef?.streamSeq ?? 0, last.streamSeq)) {
      if (msg.header.get(WRITER) !== this.writer) {
        throw fenced(this.session, "its log has events this node did not write");
      }
      const batch = decodeBatch(msg, this.session, this.where, this.ctx.stream);
      for (const e of batch) sizeOf.set(e, Math.ceil(msg.data.length / batch.length));
      landed.push(...appends.take(refOf(msg, this.where), batch));
    }
    this.tailRef = last;
    [this.durableSeq, this.held] = [appends.shown, appends.held];
    this.delivered(landed, sizeOf);
    return true;
  }
}
