// The embedded event log: JSONL segments per session (lines in log-format.ts, segments in segments.ts), group-
// committed (one durable write per batch: O_DSYNC where that is as strong as write + fdatasync, see log-io.ts).
// Opening reads the saved state (log-state.ts) and the last segment's tail; a read after a cursor bisects the
// segment holding it. The descriptor is closed while the log is idle and reopened by the next append or read;
// the ownership lock (a file) stays held throughout. Through the store's journal (journal.ts), a commit is durable
// by the journal's write, and the file is synced when the journal or the log's state needs it.
import nodePath from "node:path";
import { type AppendOptions, type EventLog, LogSubscribers } from "../../core/event-log.js";
import type { NewEvent, SessionEvent } from "../../protocol/events.js";
import { failure, osMessage, StoreError } from "./errors.js";
import { InlineCommits } from "./inline-commits.js";
import { IsoTime } from "./iso-time.js";
import { type Journal, journaled } from "./journal.js";
import { Batch } from "./log-batch.js";
import { DeferredWait } from "./log-defer.js";
import { header, type WriterState } from "./log-format.js";
import { IdleClock } from "./log-idle.js";
import { allDone, type LogIO, nodeLogIO } from "./log-io.js";
import type { LogLock } from "./log-lock.js";
import { cutBack, type OpenedLog, type OpenOptions, openLogFiles, reopenLog } from "./log-open.js";
import { PendingBytes } from "./log-pending.js";
import { readLive } from "./log-read.js";
import { type LogState, type OpenState, SAVE_EVERY, saveStateAt, worthSaving } from "./log-state.js";
import { LogTasks } from "./log-tasks.js";
import { DEFAULT_IDLE_MS, REUSE_BYTES, REUSE_EVENTS, SEGMENT_BYTES } from "./log-tuning.js";
import { type Segment, seal } from "./segments.js";

/** A commit started as the one before it was delivered (see followOn). */
type FollowOn = { commit: Promise<FollowOn | undefined> };

export class JsonlEventLog implements EventLog {
  /** Appends waiting for the next commit. Their seqs are given at the commit (a failed batch's: see burnedSeq). */
  private queue = new Batch();
  readonly pending = new PendingBytes(() => this.queue.size);
  /** The last commit's buffer and batch, for the next (see REUSE_BYTES); dropped when the log idles. */
  private scratch: Buffer | undefined;
  private spare: Batch | undefined;
  private flushing: Promise<void> | undefined;
  private readonly deferred = new DeferredWait(
    () => this.queue,
    () => this.flushSoon(),
  );
  private closing: Promise<void> | undefined;
  private durableSeq: number;
  /** A failed batch's last seq: a reader in another process may have read its lines before the cut, so no event
   *  gets its seqs again (a gap). Till a commit passes it, its burn mark past `size` (log-format.ts; `marked`: one
   *  may be there, or what the next write left of it, to cut before a seal) and the saved state keep it. */
  private burnedSeq: number;
  private marked: number;
  /** Durable byte length: where the next batch is written and what a failed batch is cut back to. */
  private size: number;
  /** Commits in one second share its timestamp's text up to the milliseconds (toISOString costs more than them). */
  private readonly time = new IsoTime();
  /** A failed batch could not be cut off yet; the next flush retries before writing. */
  private rollbackPending = false;
  /** A segment rolled to and not written yet: its header, which the next write puts first (see rollIfFull). */
  private rolledHead: string | undefined;
  private readonly subscribers = new LogSubscribers(() => `event log ${this.path}`);
  private fd: number | undefined;
  private reopening: Promise<number> | undefined;
  /** Appends, reads and state saves using the descriptor now: it is closed only when none is. */
  private busy = 0;
  private readonly idleClock: IdleClock;
  private readonly tasks = new LogTasks();
  private savedEnd: number;
  private saving: Promise<void> | undefined;
  private readonly lock: LogLock;
  private readonly state: LogState;
  private readonly segmentBytes: number;
  /** Sealed segments, oldest first, and the seq before the active one's range. */
  private readonly sealed: Segment[];
  private base: number;
  /** Descriptors of segments sealed while something still used them: closed once nothing does. */
  private retired: number[] = [];
  private readonly inline: InlineCommits;
  /** The store's journal, when commits go through it: then the file is synced only when asked (syncFile). */
  private readonly journal: Journal | undefined;

  private constructor(
    readonly path: string,
    readonly session: string,
    private readonly io: LogIO,
    opened: OpenedLog,
    options: OpenOptions,
    private writer: WriterState,
  ) {
    ({ fd: this.fd, lock: this.lock, state: this.state, sealed: this.sealed, base: this.base } = opened);
    [this.durableSeq, this.size] = [opened.scan.lastSeq, opened.scan.end];
    [this.savedEnd, this.burnedSeq, this.marked] = [opened.savedEnd, opened.burned ?? 0, opened.marked ?? 0];
    this.idleClock = new IdleClock(
      options.idleMs ?? DEFAULT_IDLE_MS,
      () => void this.tasks.track(this.idle()),
    );
    this.segmentBytes = options.segmentBytes ?? SEGMENT_BYTES;
    this.inline = options.inline ?? new InlineCommits();
    this.journal = options.journal;
    this.scheduleIdle();
  }

  /**
   * Opens (creating if needed) the log at `path` for writing, cutting a torn last line left by a crash
   * mid-write. Takes the log's lock first: a log another live process has open is refused (LogLockedError).
   */
  static async open(
    path: string,
    session: string,
    io: LogIO = nodeLogIO,
    options: OpenOptions = {},
  ): Promise<JsonlEventLog> {
    const opened = await openLogFiles(path, session, io, options);
    const { scan } = opened;
    const writer = { context: scan.context, sinceAnchor: scan.sinceAnchor, anchor: scan.anchor };
    const log = new JsonlEventLog(path, session, io, opened, options, writer);
    if (log.size - opened.savedEnd > SAVE_EVERY) log.saveSoon();
    return log;
  }

  get lastSeq(): number {
    return this.durableSeq;
  }

  /** Whether the file is open now (it is not while the log is idle). */
  get holdsDescriptor(): boolean {
    return this.fd !== undefined;
  }

  /** Open requests and open turns as of the last durable event: what reopening a session needs. */
  openState(): OpenState {
    return this.state.snapshot();
  }

  append(events: NewEvent[], options?: AppendOptions): Promise<SessionEvent[]> {
    if (this.closing)
      return Promise.reject(new StoreError("brain_error", `event log ${this.path} is closed`));
    if (events.length === 0) return Promise.resolve([]);
    try {
      this.queue.add(events, !options?.ignoreResult, options?.deferred);
    } catch (err) {
      return Promise.reject(
        new StoreError("bad_request", `event log ${this.path}: event not serializable: ${osMessage(err)}`),
      );
    }
    const written = new Promise<SessionEvent[]>(this.queue.settle);
    if (options?.awaited) this.queue.awaited++;
    if (options?.deferred) this.deferred.start();
    else this.flushSoon();
    return written;
  }

  async read(after: number, limit = Number.POSITIVE_INFINITY): Promise<SessionEvent[]> {
    if (this.closing) throw new StoreError("brain_error", `event log ${this.path} is closed`);
    const { path, session, durableSeq, size, base, sealed } = this;
    const live = { path, session, durableSeq, size, base, sealed, anchor: this.writer.anchor };
    const read = readLive(this.io, live, after, limit);
    return read ? this.tasks.track(this.withFd(read)) : [];
  }

  /**
   * The first seq the log still holds a range for: 1, unless retention dropped or archived its oldest segments
   * (then every event before it is gone from this log).
   */
  get firstSeq(): number {
    return this.sealed[0]?.first ?? this.base + 1;
  }

  subscribe(listener: (events: SessionEvent[]) => void): () => void {
    return this.subscribers.add(listener);
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      this.deferred.over(); // deferred appends do not wait out their timer
      while (this.flushing) await this.flushing;
      await this.tasks.settled();
      this.idleClock.stop();
      this.subscribers.clear();
      let unsynced: Error | undefined; // through the journal: its records are kept there, the close says so
      try {
        // Left in place, a failed batch's complete lines would come back as events on the next open.
        if (this.rollbackPending) await this.withFd((fd) => this.rollback(fd));
      } catch (err) {
        throw failure(this.path, "cannot cut a failed batch", err);
      } finally {
        try {
          if (this.fd !== undefined) {
            unsynced = await this.journal?.syncAtClose(this.fd, this.path);
            if (!unsynced) await this.saveState(this.fd).catch(() => {});
            await this.io.close(this.fd);
            this.fd = undefined;
          }
        } finally {
          await this.lock.release();
        }
      }
      if (unsynced) throw unsynced;
    })();
    return this.closing;
  }

  /**
   * A microtask, not a timer: appends made in this tick join the first write; later ones queue up behind the
   * flush in flight and form the next batch.
   */
  private flushSoon(): void {
    this.deferred.cancel();
    this.flushing ??= Promise.resolve().then(() => this.flushLoop());
  }

  private async flushLoop(): Promise<void> {
    while (this.queue.due > 0) {
      const batch = this.pending.take(this.queue);
      this.queue = this.spare ?? new Batch();
      this.spare = undefined;
      // The file could not be reopened after idleness: nothing was written, the batch and those behind it fail.
      let next = await this.withFd((f) => this.write(f, batch)).catch((err: Error) => this.fail(err, batch));
      while (next) next = await next.commit.catch((err: Error) => this.fail(err));
    }
    this.flushing = undefined;
    this.deferred.start(); // deferred appends left waiting for company: their wait is bounded still
  }

  /** Fails `batch` and the appends queued behind it. */
  private fail(err: Error, batch?: Batch): undefined {
    const behind = this.queue;
    this.queue = new Batch();
    batch?.reject(err);
    behind.reject(err);
    this.pending.done(batch);
    return undefined;
  }

  /** A segment that is not full (nearly every commit) goes straight to the write, without the roll's await. */
  private write(fd: number, batch: Batch): Promise<FollowOn | undefined> {
    if (this.size < this.segmentBytes) return this.commit(fd, batch);
    return this.rollIfFull(fd).then((f) => this.commit(f, batch));
  }

  private async commit(fd: number, batch: Batch): Promise<FollowOn | undefined> {
    const ms = Date.now();
    const iso = this.time.of(ms);
    const first = Math.max(this.durableSeq, this.burnedSeq) + 1;
    let next: WriterState;
    try {
      // A new file starts with its header; a failed first batch cuts it with the rest.
      const head = this.size === 0 ? (this.rolledHead ?? header(this.session)) : "";
      // One buffer (and a message's text blocks as they are): a write(2) each, durable when it returns.
      const laid = batch.layout(head, first, iso, ms, this.size, this.writer, this.scratch);
      this.scratch = undefined; // until the write is done with it
      next = laid.state;
      if (this.rollbackPending) await this.rollback(fd);
      // Nothing in a rolled segment is durable before its name is: the directory sync runs beside the write.
      const entry = this.rolledHead === undefined ? undefined : this.io.syncDir(nodePath.dirname(this.path));
      const at = { s: this.session, p: this.path, b: this.base, f: first, l: first + batch.length - 1 };
      const viaJournal = journaled(this.journal, this, this.io, fd, { ...at, o: this.size }, laid);
      const lone = batch.awaited === 1; // see Batch.awaited
      const wrote = this.inline.write(this, lone, this.io, fd, laid.parts, this.size, viaJournal);
      await (entry ? allDone([wrote, entry]) : wrote);
      this.rolledHead = undefined;
      this.size += laid.length;
      if (laid.scratch.length <= REUSE_BYTES) this.scratch = laid.scratch;
    } catch (err) {
      this.burnedSeq = first + batch.length - 1;
      this.savedEnd = -1; // the next save (at idle, at close) keeps it for the next open
      await this.rollback(fd).catch(() => {});
      // Appends queued behind it were made before its failure was known and may continue it (a stream of deltas):
      // written after the gap they would hide lost events behind dense seqs, so they fail too; later ones go on.
      return this.fail(failure(this.path, "append failed", err), batch);
    }
    this.writer = next;
    this.durableSeq = first + batch.length - 1;
    const following = this.followOn();
    batch.deliver(this.session, first, iso, this.state, this.subscribers);
    this.pending.done(batch);
    if (batch.length <= REUSE_EVENTS) {
      batch.reset(REUSE_BYTES);
      this.spare = batch;
    }
    if (worthSaving(this.size, this.savedEnd, this.writer.anchor.offset)) this.saveSoon();
    return following;
  }

  /**
   * Starts the next batch's commit once this one is durable and before it is delivered, so that the delivery
   * (thousands of events made and handed out) runs while the disk writes. Still one write at a time, each once
   * the one before is durable; deliveries keep their order; a roll's rename and create run during the delivery.
   * Not when the next awaits a cut back before its write, nor when one caller alone awaits it (written on this
   * thread, see Batch.awaited, it would hold up the delivery). A failed roll fails the batch here.
   */
  private followOn(): FollowOn | undefined {
    const next = this.queue;
    if (next.due === 0 || next.awaited === 1 || this.rollbackPending) return;
    this.pending.take(next);
    this.queue = this.spare ?? new Batch();
    this.spare = undefined;
    return { commit: this.withFd((f) => this.write(f, next)).catch((err: Error) => this.fail(err, next)) };
  }

  /** Cuts the file back to its durable length and the burn mark (not on a seal: the batch after it marks them). */
  private async rollback(fd: number, sealing = false): Promise<void> {
    this.rollbackPending = true;
    const burn = !sealing && this.burnedSeq > this.durableSeq ? this.burnedSeq : undefined;
    this.marked = await cutBack(this.io, fd, this.size, burn);
    this.rollbackPending = false;
  }

  /** Runs `fn` with the file open (reopening it after idleness); the idle clock restarts when all are done. */
  private async withFd<T>(fn: (fd: number) => Promise<T>): Promise<T> {
    this.busy++;
    try {
      const fd = this.fd ?? (await this.reopen());
      return await fn(fd);
    } finally {
      if (--this.busy === 0) {
        for (const old of this.retired.splice(0)) void this.io.close(old).catch(() => {});
        this.scheduleIdle();
      }
    }
  }

  /**
   * Seals the active segment once it is full, before a batch (a batch never spans two segments), and returns
   * the descriptor to write with: a rename and a create, the header left to the batch's write. A failure leaves
   * the batch to fail as a write would, and the log as it was on disk, or rolled with the new segment empty
   * (its header written by the next batch); a crash at any step of the roll is repaired by the next open.
   */
  private async rollIfFull(fd: number): Promise<number> {
    if (this.size < this.segmentBytes || this.durableSeq === this.base) return fd;
    // A failed batch's bytes must not be sealed in with the rest.
    if (this.rollbackPending || this.marked > 0) await this.rollback(fd, true);
    if (this.journal) await this.io.datasync(fd); // sealed, it is no longer where the journal's records replay
    const rolled = await seal(this.io, this.path, this.base + 1);
    // Taken after an await: a follow-on commit rolls before the state has observed the commit before it.
    this.rolledHead = header(this.session, { seq: this.durableSeq, ...this.state.snapshot() });
    this.sealed.push(rolled.sealed);
    this.retired.push(fd);
    this.fd = rolled.fd;
    this.base = this.durableSeq;
    this.size = 0;
    this.rollbackPending = rolled.stale; // cut to 0 before the first write
    this.savedEnd = -1;
    this.writer = { context: undefined, sinceAnchor: 0, anchor: { seq: this.base + 1, offset: 0 } };
    return rolled.fd;
  }

  /** Makes every byte written to the active file durable (JournalWriter): a closed file was synced as it closed. */
  syncFile = async () => (this.journal && this.fd !== undefined ? this.withFd(this.io.datasync) : undefined);

  private reopen(): Promise<number> {
    this.reopening ??= reopenLog(this.io, this.path)
      .then((fd) => (this.fd = fd))
      .finally(() => {
        this.reopening = undefined;
      });
    return this.reopening;
  }

  private scheduleIdle(): void {
    if (!this.closing) this.idleClock.restart();
  }

  /** Saves the state and closes the file, unless something started using it meanwhile. */
  private async idle(): Promise<void> {
    if (this.busy > 0 || this.fd === undefined || this.closing || this.flushing) return;
    this.busy++;
    // Through the journal, the save syncs the file first: a file closed unsynced would need the journal's records.
    const saved = await this.saveState(this.fd)
      .finally(() => this.busy--)
      .then(() => true)
      .catch(() => !this.journal);
    if (!saved || this.busy > 0 || this.fd === undefined || this.closing || this.flushing) return;
    const fd = this.fd;
    this.fd = undefined;
    this.scratch = this.spare = undefined; // and the queue's room, when it is the last commit's batch reused
    if (this.queue.length === 0) this.queue = new Batch();
    await this.io.close(fd).catch(() => {});
  }

  private saveSoon(): void {
    if (this.saving) return;
    this.saving = this.tasks
      .track(this.withFd((fd) => this.saveState(fd)))
      .catch(() => {}) // a state not saved only makes the next open scan further
      .finally(() => {
        this.saving = undefined;
      });
  }

  /** Saves the state, for the bytes up to `size`: through the journal, once they are synced (they are not yet). */
  private async saveState(fd: number): Promise<void> {
    if (this.savedEnd === this.size) return;
    if (this.journal) await this.io.datasync(fd);
    const [end, seq, anchor, base] = [this.size, this.durableSeq, this.writer.anchor, this.base];
    const burned = this.burnedSeq > seq ? { burned: this.burnedSeq } : {};
    await saveStateAt(this.io, fd, this.path, { seq, end, anchor, ...this.state.snapshot(), ...burned });
    if (this.base === base) this.savedEnd = end; // not the size of a segment sealed meanwhile
  }
}

export { readEventsFile } from "./log-read.js";
