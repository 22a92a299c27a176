// The embedded event log: one JSONL file per session, group-committed (one write + one fdatasync per batch).
import fs from "node:fs";
import nodePath from "node:path";
import type { EventLog } from "../../core/event-log.js";
import type { NewEvent, SessionEvent } from "../../protocol/events.js";
import { osMessage, StoreError } from "./errors.js";
import { LineTails } from "./event-line.js";
import { corrupt, parseLine, scanLog } from "./jsonl-scan.js";
import { type LogIO, nodeLogIO, readFully, writeFully } from "./log-io.js";
import { acquireLogLock, type LogHolder, type LogLock } from "./log-lock.js";

export interface OpenOptions {
  /** Who this process is, for the error another writer gets (default: a plain process). */
  holder?: LogHolder;
}

/** One append() call waiting for its batch. Seqs stay mutable until durable: a failed batch gives them back. */
interface Pending {
  events: SessionEvent[];
  /** Each line after `{"seq":N,`, serialized at append time. */
  tails: string[];
  tailBytes: number[];
  resolve(events: SessionEvent[]): void;
  reject(err: Error): void;
}

export class JsonlEventLog implements EventLog {
  private queue: Pending[] = [];
  private flushing: Promise<void> | undefined;
  private closing: Promise<void> | undefined;
  private nextSeq: number;
  private durableSeq: number;
  /** Durable byte length: where the next batch is written and what a failed batch is cut back to. */
  private size: number;
  /** toISOString costs more than the rest of an append; a burst in one millisecond shares one. */
  private clock = { ms: -1, iso: "" };
  /** A failed batch could not be cut off yet; the next flush retries before writing. */
  private rollbackPending = false;
  private readonly listeners = new Set<(events: SessionEvent[]) => void>();
  private readonly reads = new Set<Promise<unknown>>();
  private readonly lines: LineTails;

  private constructor(
    readonly path: string,
    readonly session: string,
    private readonly io: LogIO,
    private readonly fd: number,
    private readonly lock: LogLock,
    /** offsets[i] = byte offset of seq i + 1, so a read from any seq starts right there. */
    private readonly offsets: number[],
    size: number,
  ) {
    this.lines = new LineTails(session);
    this.durableSeq = offsets.length;
    this.nextSeq = this.durableSeq + 1;
    this.size = size;
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
    const lock = await acquireLogLock(path, {
      session,
      ...(options.holder ? { holder: options.holder } : {}),
    });
    let fd: number;
    try {
      fd = await io.open(path, fs.constants.O_RDWR | fs.constants.O_CREAT, 0o600);
    } catch (err) {
      await lock.release();
      throw failure(path, "cannot open", err);
    }
    try {
      const size = await io.size(fd);
      const scan = await scanLog(io, fd, size, path, false);
      if (scan.end < size) {
        await io.truncate(fd, scan.end);
        await io.datasync(fd);
      }
      // The file may be new: its directory entry must be durable before any event in it counts as durable.
      await io.syncDir(nodePath.dirname(path));
      return new JsonlEventLog(path, session, io, fd, lock, scan.offsets, scan.end);
    } catch (err) {
      await io.close(fd).catch(() => {});
      await lock.release();
      if (err instanceof StoreError) throw err;
      throw failure(path, "cannot open", err);
    }
  }

  get lastSeq(): number {
    return this.durableSeq;
  }

  append(events: NewEvent[]): Promise<SessionEvent[]> {
    if (this.closing)
      return Promise.reject(new StoreError("brain_error", `event log ${this.path} is closed`));
    if (events.length === 0) return Promise.resolve([]);
    const ts = this.now();
    const pending: Omit<Pending, "resolve" | "reject"> = { events: [], tails: [], tailBytes: [] };
    try {
      for (const e of events) {
        // Serialized now, so a value JSON cannot hold fails this call alone, not the batch it would join.
        pending.tails.push(this.lines.tail(ts, e));
        pending.tailBytes.push(this.lines.bytes);
        const stored = { seq: 0, ts, session: this.session, type: e.type, data: e.data } as SessionEvent;
        if (e.turn !== undefined) stored.turn = e.turn;
        pending.events.push(stored);
      }
    } catch (err) {
      return Promise.reject(
        new StoreError("bad_request", `event log ${this.path}: event not serializable: ${osMessage(err)}`),
      );
    }
    for (const e of pending.events) e.seq = this.nextSeq++;
    return new Promise((resolve, reject) => {
      // Fields written out: an object spread here cost ~3.5 µs per append on the hot path.
      this.queue.push({
        events: pending.events,
        tails: pending.tails,
        tailBytes: pending.tailBytes,
        resolve,
        reject,
      });
      // A microtask, not a timer: appends made in this tick join the first write; later ones queue up
      // behind the flush in flight and form the next batch.
      this.flushing ??= Promise.resolve().then(() => this.flushLoop());
    });
  }

  async read(after: number, limit = Number.POSITIVE_INFINITY): Promise<SessionEvent[]> {
    if (this.closing) throw new StoreError("brain_error", `event log ${this.path} is closed`);
    if (!Number.isInteger(after) || after < 0 || !(limit >= 0)) {
      throw new StoreError(
        "bad_request",
        `event log ${this.path}: bad read range after=${after} limit=${limit}`,
      );
    }
    const last = Math.min(this.durableSeq, after + Math.floor(limit));
    if (last <= after) return [];
    const start = this.offsets[after]!;
    const end = last < this.durableSeq ? this.offsets[last]! : this.size;
    const task = readFully(this.io, this.fd, start, end - start);
    this.reads.add(task);
    let buf: Buffer;
    try {
      buf = await task;
    } finally {
      this.reads.delete(task);
    }
    const out: SessionEvent[] = [];
    let pos = 0;
    for (let seq = after + 1; seq <= last; seq++) {
      const nl = buf.indexOf(0x0a, pos);
      if (nl < 0) throw corrupt(this.path, seq, "line cut short");
      const parsed = parseLine(buf.toString("utf8", pos, nl));
      if ("reason" in parsed) throw corrupt(this.path, seq, parsed.reason);
      if (parsed.event.seq !== seq)
        throw corrupt(this.path, seq, `seq ${parsed.event.seq} where ${seq} was expected`);
      out.push(parsed.event);
      pos = nl + 1;
    }
    return out;
  }

  subscribe(listener: (events: SessionEvent[]) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      while (this.flushing) await this.flushing;
      await Promise.allSettled([...this.reads]);
      this.listeners.clear();
      try {
        // Left in place, a failed batch's complete lines would come back as events on the next open.
        if (this.rollbackPending) await this.rollback();
      } catch (err) {
        throw failure(this.path, "cannot cut a failed batch", err);
      } finally {
        try {
          await this.io.close(this.fd);
        } finally {
          await this.lock.release();
        }
      }
    })();
    return this.closing;
  }

  private now(): string {
    const ms = Date.now();
    if (ms !== this.clock.ms) this.clock = { ms, iso: new Date(ms).toISOString() };
    return this.clock.iso;
  }

  private async flushLoop(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue;
      this.queue = [];
      await this.commit(batch);
    }
    this.flushing = undefined;
  }

  private async commit(batch: Pending[]): Promise<void> {
    const lengths: number[] = [];
    try {
      let total = 0;
      for (const p of batch) {
        for (const [i, e] of p.events.entries()) {
          const len = `{"seq":${e.seq},`.length + p.tailBytes[i]! + 1;
          lengths.push(len);
          total += len;
        }
      }
      // The whole batch in one buffer of known size: one write(2), then one fdatasync.
      const buf = Buffer.allocUnsafe(total);
      let at = 0;
      for (const p of batch) {
        for (const [i, e] of p.events.entries()) {
          at += buf.write(`{"seq":${e.seq},`, at, "latin1");
          at += buf.write(p.tails[i]!, at, "utf8");
          buf[at++] = 0x0a;
        }
      }
      if (this.rollbackPending) await this.rollback();
      await writeFully(this.io, this.fd, buf, this.size);
      await this.io.datasync(this.fd);
    } catch (err) {
      await this.rollback().catch(() => {});
      // Appends queued behind the failed batch were made before its failure was known and may continue it (the
      // rest of a stream of deltas): written after the gap, they would hide lost events behind dense seqs. They
      // fail with it; appends made once the failure is known go on as usual. Their seqs are given back.
      const behind = this.queue;
      this.queue = [];
      this.nextSeq = this.durableSeq + 1;
      const error = failure(this.path, "append failed", err);
      for (const p of batch) p.reject(error);
      for (const p of behind) p.reject(error);
      return;
    }
    let at = this.size;
    for (const len of lengths) {
      this.offsets.push(at);
      at += len;
    }
    this.size = at;
    this.durableSeq = this.offsets.length;
    const durable: SessionEvent[] = [];
    for (const p of batch) {
      p.resolve(p.events);
      for (const e of p.events) durable.push(e);
    }
    for (const listener of [...this.listeners]) {
      try {
        listener(durable);
      } catch (err) {
        // One broken subscriber must neither stop the log nor starve the others.
        process.emitWarning(`event log ${this.path}: subscriber threw: ${osMessage(err)}`);
      }
    }
  }

  /** Cuts the file back to its durable length, so no partial batch stays behind. */
  private async rollback(): Promise<void> {
    this.rollbackPending = true;
    await this.io.truncate(this.fd, this.size);
    await this.io.datasync(this.fd);
    this.rollbackPending = false;
  }
}

function failure(path: string, what: string, err: unknown): StoreError {
  return new StoreError("brain_error", `event log ${path}: ${what}: ${osMessage(err)}`, { cause: err });
}

/** All events of a log that is not open here (the CLI reading a session). A torn last line is skipped. */
export async function readEventsFile(path: string, io: LogIO = nodeLogIO): Promise<SessionEvent[]> {
  let fd: number;
  try {
    fd = await io.open(path, fs.constants.O_RDONLY);
  } catch (err) {
    throw failure(path, "cannot open", err);
  }
  try {
    return (await scanLog(io, fd, await io.size(fd), path, true)).events;
  } finally {
    await io.close(fd);
  }
}
