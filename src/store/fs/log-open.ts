// Opening a log for writing: its lock, then its last segment only. A torn tail is cut; an `events.jsonl` missing
// or empty beside sealed segments (a crash between sealing one and starting the next) is started again from
// where the last sealed one ends.
import fs from "node:fs";
import nodePath from "node:path";
import { failure, StoreError } from "./errors.js";
import type { InlineCommits } from "./inline-commits.js";
import { recover, type ScanResult, scanLog } from "./jsonl-scan.js";
import { type LogIO, writeFlags } from "./log-io.js";
import { acquireLogLock, type LogHolder, type LogLock } from "./log-lock.js";
import { LogState, removeStaleTemps } from "./log-state.js";
import { baseAfter, listSealed, readHeader, type Segment, startSegment } from "./segments.js";

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
}

export interface OpenedLog {
  fd: number;
  lock: LogLock;
  scan: ScanResult;
  state: LogState;
  savedEnd: number;
  /** The last seq of a batch the disk refused, as the state saved by the log's last writer says. */
  burned?: number;
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
  if (options.created) return openCreated(path, session, io, options.created);
  const { holder, durableEntry = false } = options;
  const lock = await acquireLogLock(path, { session, ...(holder ? { holder } : {}) });
  try {
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
    let entryDurable = durableEntry;
    if (found.scan.end === 0 && sealed.length > 0) {
      entryDurable = false;
      // Nothing (or only a torn header) after the last sealed segment: start this one from where that ends.
      const base = await baseAfter(io, sealed[sealed.length - 1]!, session);
      await io.close(fd);
      fd = undefined;
      ({ fd, size } = await startSegment(io, path, session, base));
      found = await recover(io, fd, size, path, session);
    }
    const { scan } = found;
    if (scan.end < size) {
      await io.truncate(fd, scan.end);
      await io.datasync(fd);
    }
    // The file may be new: its directory entry must be durable before any event in it counts as durable.
    if (!entryDurable) await io.syncDir(nodePath.dirname(path));
    return { fd, ...found, sealed, base: (await readHeader(io, fd, scan.end))?.base?.seq ?? 0 };
  } catch (err) {
    if (fd !== undefined) await io.close(fd).catch(() => {});
    if (err instanceof StoreError) throw err;
    throw failure(path, "cannot open", err);
  }
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
