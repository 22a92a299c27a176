// Opening a log for writing: its lock, then its last segment only. A torn tail is cut; an `events.jsonl` missing
// or empty beside sealed segments (a crash between sealing one and starting the next) is started again from
// where the last sealed one ends.
import fs from "node:fs";
import nodePath from "node:path";
import { failure, StoreError } from "./errors.js";
import type { InlineCommits } from "./inline-commits.js";
import type { Journal } from "./journal.js";
import { recover, type ScanResult, scanLog } from "./jsonl-scan.js";
import { BURN_MARK_MAX, burnMark, burnMarkSeq } from "./log-format.js";
import { type LogIO, readFully, writeFlags } from "./log-io.js";
import { acquireLogLock, type LogHolder, type LogLock } from "./log-lock.js";
import { LogState, removeStaleTemps } from "./log-state.js";
import { baseAfter, listSealed, readHeader, type Segment, startSegment } from "./segments.js";

/** Replays the home's journals of processes gone, the log at `held` (its lock taken) included. */
export type Replay = (held: string) => Promise<void>;

export interface OpenOptions {
  /** Who this process is, for the error another writer gets (default: a plain process). */
  holder?: LogHolder;
  /** Close the file after this long without an append or read (default 1 s; Infinity keeps it open). */
  idleMs?: number;
  /** Seal the segment being written once it holds this many bytes (default 8 MiB). */
  segmentBytes?: number;
  /**
   * The log's file exists and its directory entry is durable already (the store created it and synced its
   * directory), so opening it needs no directory sync of its own.
   */
  durableEntry?: boolean;
  /**
   * The log's file was made empty a moment ago by its store, opened with writeFlags, and its lock taken with it
   * (a new session): nothing to look for, read or repair, so opening it does no I/O.
   */
  created?: { fd: number; lock: LogLock };
  /** Shared by the logs of one store: lets an awaited commit skip the thread pool while no other log commits. */
  inline?: InlineCommits;
  /**
   * The store's journal: commits are durable by its write, the log's file synced when it asks (journal.ts). The
   * log's `io` should then write without O_DSYNC (syncWrites false), or each commit pays two durable writes.
   */
  journal?: Journal;
  /**
   * Replays the home's journals of processes gone (StoreJournal.ready), run once the log's lock is held and before
   * the log is read: the lock may have been taken over from a process that died holding it, whose acknowledged
   * events only its journal holds.
   */
  replay?: Replay;
}

export interface OpenedLog {
  fd: number;
  lock: LogLock;
  scan: ScanResult;
  state: LogState;
  savedEnd: number;
  /** The last seq of a batch the disk refused and no commit passed, from its burn mark or the saved state. */
  burned?: number;
  /** The length of the burn mark left past the file's last line (0: none). */
  marked?: number;
  sealed: Segment[];
  /** The seq before the active segment's range. */
  base: number;
}

export async function openLogFiles(
  path: string,
  session: string,
  io: LogIO,
  options: OpenOptions,
): Promise<OpenedLog> {
  if (options.created) {
    await options.replay?.(path); // its lock taken as it was created: other logs' replays are not held back
    return openCreated(path, session, io, options.created);
  }
  const { holder, durableEntry = false } = options;
  const lock = await acquireLogLock(path, { session, ...(holder ? { holder } : {}) });
  try {
    await options.replay?.(path);
    return { lock, ...(await repairActive(io, path, session, durableEntry)) };
  } catch (err) {
    await lock.release();
    throw err;
  }
}

/**
 * The log's active segment, opened for writing, ready for the next batch: a torn tail cut, and an active file
 * missing, empty or holding only a torn header beside sealed segments (a crash between sealing one and starting the
 * next, or a roll whose first write failed) started again from where the last sealed one ends. Everything that
 * rewrites a closed log (compaction, retention) runs this first, as opening does: without it they would take the
 * headerless file for a log starting at seq 1. The caller holds the log's lock.
 */
export async function repairActive(
  io: LogIO,
  path: string,
  session: string,
  durableEntry: boolean,
): Promise<Omit<OpenedLog, "lock">> {
  let fd: number | undefined;
  try {
    await removeStaleTemps(path);
    const sealed = await listSealed(path);
    try {
      fd = await io.open(path, writeFlags(io, fs.constants.O_RDWR | fs.constants.O_CREAT), 0o600);
    } catch (err) {
      throw failure(path, "cannot open", err);
    }
    let size = await io.size(fd);
    let found = await recover(io, fd, size, path, session);
    const marked = await readBurnMark(io, fd, found.scan.end, size);
    let markOnDisk = marked !== undefined;
    let entryDurable = durableEntry;
    if (found.scan.end === 0 && sealed.length > 0) {
      entryDurable = false;
      // Nothing (or only a torn header) after the last sealed segment: start this one from where that ends.
      const base = await baseAfter(io, sealed[sealed.length - 1]!, session);
      await io.close(fd);
      fd = undefined;
      ({ fd, size } = await startSegment(io, path, session, base));
      markOnDisk = false;
      found = await recover(io, fd, size, path, session);
    }
    const { scan } = found;
    const burned = Math.max(found.burned ?? 0, marked ?? 0);
    // Kept past the last line (written again when only the state named it, or the segment was started again).
    const kept = burned > scan.lastSeq && markOnDisk && marked === burned;
    let keep = kept ? size - scan.end : 0;
    if (!kept && (burned > scan.lastSeq || scan.end < size))
      keep = await cutBack(io, fd, scan.end, burned > scan.lastSeq ? burned : undefined);
    // The file may be new: its directory entry must be durable before any event in it counts as durable.
    if (!entryDurable) await io.syncDir(nodePath.dirname(path));
    const base = (await readHeader(io, fd, scan.end))?.base?.seq ?? 0;
    return { fd, ...found, ...(burned > 0 ? { burned } : {}), marked: keep, sealed, base };
  } catch (err) {
    if (fd !== undefined) await io.close(fd).catch(() => {});
    if (err instanceof StoreError) throw err;
    throw failure(path, "cannot open", err);
  }
}

/** The seq named by a burn mark that is all of [from, size), if one is. */
async function readBurnMark(io: LogIO, fd: number, from: number, size: number): Promise<number | undefined> {
  if (size <= from || size - from > BURN_MARK_MAX) return undefined;
  return burnMarkSeq((await readFully(io, fd, from, size - from)).toString("utf8"));
}

/**
 * Writes the burn mark of `seq` at `at` and cuts the file just past it, or back to `at` when the mark cannot be
 * written (the saved state is then all that names the seq). Returns the mark's length, or 0. Cut first: over the
 * refused batch's first bytes (room a full disk gave already), so that no crash leaves its other lines past it.
 */
async function markBurn(io: LogIO, fd: number, at: number, seq: number): Promise<number> {
  const mark = Buffer.from(burnMark(seq), "utf8");
  await io.truncate(fd, at + mark.length);
  try {
    if ((await io.write(fd, mark, 0, mark.length, at)) === mark.length) return mark.length;
  } catch {}
  await io.truncate(fd, at);
  return 0;
}

/**
 * Cuts the file at `fd` back to `size`, no partial batch left behind, leaving past it the burn mark of `burned`
 * when given; synced. Returns the mark's length.
 */
export async function cutBack(io: LogIO, fd: number, size: number, burned?: number): Promise<number> {
  const marked = burned === undefined ? 0 : await markBurn(io, fd, size, burned);
  if (burned === undefined) await io.truncate(fd, size);
  await io.datasync(fd);
  return marked;
}

/** The log's file again, after idleness. */
export async function reopenLog(io: LogIO, path: string): Promise<number> {
  try {
    return await io.open(path, writeFlags(io, fs.constants.O_RDWR), 0o600);
  } catch (err) {
    throw failure(path, "cannot reopen", err);
  }
}

async function openCreated(
  path: string,
  session: string,
  io: LogIO,
  { fd, lock }: { fd: number; lock: LogLock },
): Promise<OpenedLog> {
  // An empty file: the walk reads nothing and gives the start state every scan of an empty log gives.
  const scan = await scanLog(io, fd, 0, path, { session, from: 0, prevSeq: 0 });
  return { fd, lock, scan, state: new LogState(), savedEnd: 0, sealed: [], base: 0 };
}
