// One write-ahead journal for the group commits of every log of a store in this process. Without it each log's
// commit is a durable write of its own (O_DSYNC, see log-io.ts): with 100 sessions streaming, 100 syncs where one
// would do. With it, a log writes its batch into its own file without a sync, then hands the same bytes to the
// journal; the journal writes all the records handed to it meanwhile in one durable write, and only then does
// each log deliver its batch (an event is visible only once durable). The logs' own files are synced when the
// journal is cut back (every ROTATE_BYTES, and at close), so a byte not synced in a log's file is always in a
// record of a live journal, which the next open replays (journal-replay.ts).
// One journal per process (its name holds its pid and a nonce, its lock says whether its process lives): two
// processes writing one file would interleave, and only a dead process's journal may be replayed.
// An awaited commit while no other log commits (a sequential tool caller) skips it: written and synced on the
// loop's thread straight into its file (InlineCommits), one sync as without a journal and no hand-off.
// Off by default (StoreOptions.journal) until it measures faster on sse-load (see the branch's report).
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import fsp from "node:fs/promises";
import nodePath from "node:path";
import { crc32 } from "node:zlib";
import { failure } from "./errors.js";
import { allDone, type LogIO, writeAll, writeAllNow, writeDurably, writeFlags } from "./log-io.js";
import { acquireLogLock, type LogLock } from "./log-lock.js";

/** The journal is cut back once it holds this many bytes (after the logs it names are synced). */
const ROTATE_BYTES = 64 << 20;
/** A record's frame: magic, the header's length, the payload's length, the CRC-32 of header and payload. */
export const [FRAME_BYTES, MAGIC] = [16, 0x4252_4a31]; // "BRJ1"
export const JOURNAL_SUFFIX = ".wal";

/** A log that writes through the journal: its file's bytes are durable once syncFile resolves. */
export interface JournalWriter {
  syncFile(): Promise<void>;
}

/** What a record says of the bytes it carries: the log, its segment, the batch's seqs and its place in the file. */
export interface RecordHead {
  /** The session and the log's active file (in the journal: relative to the journal's parent, the home). */
  s: string;
  p: string;
  /** The segment's base (the seq before its range): a record of a segment sealed since is not replayed. */
  b: number;
  /** The batch's first and last seq, and the byte offset it was written at. */
  f: number;
  l: number;
  o: number;
}

interface Pending {
  head: RecordHead;
  parts: readonly Buffer[];
  length: number;
  resolve: () => void;
  reject: (err: Error) => void;
}

/** A record's bytes: its frame, its header, then the batch's bytes as they were written to the log's file. */
export function encodeRecord(head: RecordHead, parts: readonly Buffer[], length: number): Buffer[] {
  const headBytes = Buffer.from(JSON.stringify(head), "utf8");
  let crc = crc32(headBytes);
  for (const part of parts) crc = crc32(part, crc);
  const frame = Buffer.allocUnsafe(FRAME_BYTES);
  frame.writeUInt32LE(MAGIC, 0);
  frame.writeUInt32LE(headBytes.length, 4);
  frame.writeUInt32LE(length, 8);
  frame.writeUInt32LE(crc, 12);
  return [frame, headBytes, ...parts];
}

export class Journal {
  private fd: number | undefined;
  private lock: LogLock | undefined;
  private opening: Promise<number> | undefined;
  /** Durable length: where the next round is written and what a failed round is cut back to. */
  private size = 0;
  private pending: Pending[] = [];
  private writing: Promise<void> | undefined;
  /** Logs that wrote bytes since the last cut: they are synced before the journal forgets their records. */
  private touched = new Set<JournalWriter>();
  /**
   * Each log's path as its records name it (relative to the home), made once per log per cut rather than once per
   * record: path.relative resolves both paths each time, 1.2 % of the loop's busy time under sse-load (profiled).
   * Emptied at each cut, so it holds no more logs than `touched`.
   */
  private readonly relativePaths = new Map<string, string>();
  /**
   * A log's file whose sync failed (as it closed, or any time: see poison): the journal is never cut again (its
   * records replay once we are gone), and `unsyncedLogs` are what an open of them in this store replays from it.
   */
  private unsynced: Error | undefined;
  private readonly unsyncedLogs = new Set<string>();
  private closed = false;
  readonly path: string;

  constructor(
    readonly dir: string,
    private readonly io: LogIO,
  ) {
    this.path = nodePath.join(dir, `${process.pid}-${randomBytes(6).toString("hex")}${JOURNAL_SUFFIX}`);
  }

  /**
   * Makes `parts` (already written, not synced, at `head.o` of `head.p`) durable in the journal: resolves once
   * they are. Records handed over while a round is written go together in the next one.
   */
  commit(writer: JournalWriter, head: RecordHead, parts: readonly Buffer[], length: number): Promise<void> {
    if (this.closed) return Promise.reject(failure(this.path, "cannot journal", new Error("closed")));
    this.touched.add(writer);
    // Relative to the home (the journal's parent): a home copied or moved whole replays into itself.
    let relative = this.relativePaths.get(head.p);
    if (relative === undefined) {
      relative = nodePath.relative(nodePath.dirname(this.dir), head.p);
      this.relativePaths.set(head.p, relative);
    }
    head = { ...head, p: relative };
    return new Promise((resolve, reject) => {
      this.pending.push({ head, parts, length, resolve, reject });
      this.writing ??= Promise.resolve().then(() => this.loop());
    });
  }

  /**
   * Syncs a log's file as the log closes; returns the error when that fails, after which the journal keeps every
   * record (a failed fsync may have dropped the file's unsynced bytes, and a retry would not say so).
   */
  async syncAtClose(fd: number, path: string): Promise<Error | undefined> {
    try {
      await this.io.datasync(fd);
      return undefined;
    } catch (err) {
      this.poison(path, err);
      return failure(path, "cannot sync", err);
    }
  }

  /**
   * A sync of the log's file at `path` failed: its unsynced bytes may be gone from the page cache (Linux marks them
   * clean after a failed fsync), and a later sync of it succeeds without them. Only the journal still holds them,
   * so it is never cut again, and stays at close for the next store's replay; a reopen of the log in this store
   * writes them back from it first (StoreJournal.ready), or it would take the file's end for its own and reuse
   * acknowledged seqs.
   */
  poison(path: string | undefined, err: unknown): void {
    this.unsynced ??= failure(path ?? "(a file of this store)", "cannot sync", err);
    if (path !== undefined) this.unsyncedLogs.add(nodePath.resolve(path));
  }

  /** Whether the log at `path` failed a sync while this journal held records of it (see poison). */
  unsyncedLog(path: string): boolean {
    return this.unsyncedLogs.has(nodePath.resolve(path));
  }

  /**
   * Syncs every log written through it, then removes the journal: nothing in it is needed any more. When a log's
   * file could not be synced, the journal stays (its lock let go: a later store replays it) and this throws.
   */
  async close(): Promise<void> {
    this.closed = true;
    while (this.writing) await this.writing;
    if (this.fd === undefined) return;
    try {
      await this.cut();
      await fsp.rm(this.path, { force: true });
    } finally {
      await this.io.close(this.fd);
      this.fd = undefined;
      await this.lock?.release();
    }
  }

  private async loop(): Promise<void> {
    while (this.pending.length > 0) {
      const round = this.pending;
      this.pending = [];
      const bufs: Buffer[] = [];
      let length = 0;
      for (const p of round) {
        const parts = encodeRecord(p.head, p.parts, p.length);
        for (const b of parts) length += b.length;
        bufs.push(...parts);
      }
      try {
        const fd = this.fd ?? (await this.open());
        await writeDurably(this.io, fd, bufs, this.size);
        this.size += length;
      } catch (err) {
        // Its records must not come back on a replay: cut them off (the logs cut their own bytes back).
        if (this.fd !== undefined) await this.io.truncate(this.fd, this.size).catch(() => {});
        const error = failure(this.path, "cannot journal", err);
        for (const p of round) p.reject(error);
        continue;
      }
      for (const p of round) p.resolve();
      // It grows on and is cut at the next try; never once a log's sync failed (it would only fail again).
      if (this.size >= ROTATE_BYTES && !this.unsynced) await this.cut().catch(() => {});
    }
    this.writing = undefined;
  }

  /** Syncs the logs written since the last cut, then empties the journal. Runs between rounds. */
  private async cut(): Promise<void> {
    const writers = [...this.touched];
    this.touched.clear();
    this.relativePaths.clear();
    try {
      await allDone(writers.map((w) => w.syncFile()));
    } catch (err) {
      for (const w of writers) this.touched.add(w);
      throw err;
    }
    if (this.unsynced) throw this.unsynced;
    await this.io.truncate(this.fd!, 0);
    await this.io.datasync(this.fd!);
    this.size = 0;
  }

  private open(): Promise<number> {
    this.opening ??= (async () => {
      const made = await fsp.mkdir(this.dir, { recursive: true, mode: 0o700 });
      this.lock ??= await acquireLogLock(this.path, { session: "journal" });
      const { O_RDWR, O_CREAT, O_TRUNC } = fs.constants;
      const fd = await this.io.open(this.path, writeFlags(this.io, O_RDWR | O_CREAT | O_TRUNC), 0o600);
      try {
        // Nothing in it counts before its name does (and its directory's, when that is new too).
        const parent = made === undefined ? [] : [this.io.syncDir(nodePath.dirname(this.dir))];
        await allDone([this.io.syncDir(this.dir), ...parent]);
      } catch (err) {
        await this.io.close(fd).catch(() => {});
        throw err;
      }
      this.fd = fd;
      return fd;
    })();
    // A failed open is tried again by the next round.
    this.opening.catch(() => {
      if (this.fd === undefined) this.opening = undefined;
    });
    return this.opening;
  }
}

/**
 * How a commit goes through `journal` (InlineCommits' viaPool: an awaited commit alone is written straight to its
 * file), or undefined without one: its bytes into its log's own file (no sync, on the loop's thread where `io`
 * can: writeAllNow), then into the journal, resolved once durable there. The file first: a write the disk refuses fails the batch before the journal holds it (a
 * durable record of a failed batch would come back on a replay).
 */
export function journaled(
  journal: Journal | undefined,
  writer: JournalWriter,
  io: LogIO,
  fd: number,
  head: RecordHead,
  laid: { parts: readonly Buffer[]; length: number },
): (() => Promise<void>) | undefined {
  if (!journal) return undefined;
  return async () => {
    if (!writeAllNow(io, fd, laid.parts, head.o)) await writeAll(io, fd, laid.parts, head.o);
    await journal.commit(writer, head, laid.parts, laid.length);
  };
}
