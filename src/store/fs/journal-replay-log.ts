// One log's part of a journal's replay (journal-replay.ts): its records written again where its active file lacks
// them, and its damaged records (journal-parse.ts) judged by what the file holds. What cannot be replayed or proven
// fails this log alone, with what was wrong and how to recover; the journal's other logs are no business of it.
import fsp from "node:fs/promises";
import nodePath from "node:path";
import { osMessage, StoreError } from "./errors.js";
import type { DamagedRecord, JournalRecord } from "./journal-parse.js";
import { type LogIO, readFully, writeAll } from "./log-io.js";
import { acquireLogLock, type LogLock, LogLockedError } from "./log-lock.js";
import { repairActive } from "./log-open.js";

/** One log's records in one journal, and its damaged records whose head named it. */
export interface LogRecords {
  session: string;
  records: JournalRecord[];
  damaged: DamagedRecord[];
}

/**
 * "done": the log holds (synced) every record, or its session is gone. "held": a live process holds the log, which
 * is not `held` (the caller's, whose lock it holds). Otherwise the error every open of the log must fail with while
 * the journal is there.
 */
export type LogReplay = "done" | "held" | StoreError;

/** Replays `log` (one log's, in journal order) into `logPath`; never throws. */
export async function replayLog(
  io: LogIO,
  journal: string,
  logPath: string,
  log: LogRecords,
  held: boolean,
): Promise<LogReplay> {
  try {
    await fsp.access(nodePath.dirname(logPath));
  } catch {
    return "done"; // the session was removed since
  }
  let lock: LogLock | undefined;
  try {
    lock = held ? undefined : await lockOf(logPath, log.session);
    if (!held && !lock) return "held";
    const problem = await writeRecords(io, logPath, log);
    return problem === undefined ? "done" : unreplayable(journal, logPath, problem);
  } catch (err) {
    // A full disk says so (and what the client should do); anything else is the host's trouble.
    const full = err instanceof StoreError && err.code === "insufficient_storage";
    return new StoreError(
      full ? "insufficient_storage" : "brain_error",
      `journal ${journal}: cannot replay its records into log ${logPath}: ${osMessage(err)}. The journal is kept, and every open of this log fails until its replay succeeds: fix what failed, then open it again`,
      { cause: err },
    );
  } finally {
    await lock?.release();
  }
}

/** Writes the records the file lacks, synced; returns what keeps them (or a damaged one) from being proven there. */
async function writeRecords(io: LogIO, logPath: string, log: LogRecords): Promise<string | undefined> {
  const opened = await repairActive(io, logPath, log.session, false);
  const { fd, base } = opened;
  try {
    let [end, last, wrote, problem] = [
      opened.scan.end,
      opened.scan.lastSeq,
      false,
      undefined as string | undefined,
    ];
    const burned = opened.burned ?? 0;
    for (const { head, bytes } of [...log.records].sort((a, b) => a.head.f - b.head.f)) {
      if (head.b !== base || head.l <= last || head.f <= burned) continue;
      const seqs = `its record of seqs ${head.f}-${head.l}`;
      if (head.o > end) problem = `${seqs} is at byte ${head.o}, past the log's end ${end}`;
      else if (!(await holdsPrefix(io, fd, head.o, end, bytes)))
        problem = `${seqs} at byte ${head.o} differs from the bytes the log holds there`;
      if (problem) break; // what follows it cannot be in place either
      await writeAll(io, fd, bytes, head.o);
      [end, last, wrote] = [head.o + bytes.length, head.l, true];
    }
    if (wrote) await io.truncate(fd, end);
    // Synced even when the file held every record: a killed owner's writes are in the page cache, not on disk,
    // and once the journal is removed they would be nowhere durable. Not for a file this segment no longer is.
    const inSegment = (head: { b: number } | undefined) => head?.b === base;
    if (wrote || log.records.some((r) => inSegment(r.head)) || log.damaged.some((d) => inSegment(d.head)))
      await io.datasync(fd);
    // A damaged record first: it is why the records after it cannot follow (past the end), when they cannot.
    const file = { base, end, last, burned };
    return log.damaged.map((d) => unproven(d, file)).find((why) => why !== undefined) ?? problem;
  } finally {
    await io.close(fd);
  }
}

/**
 * Why the damaged record `d` may hold events the file lacks, or undefined when the file is proven to hold them:
 * its segment was sealed since (sealed files are synced first), or the file holds its seqs and reaches past its
 * bytes (both, so that a damaged head saying fewer seqs than it had is not taken at its word), or they were burned.
 */
function unproven(
  d: DamagedRecord,
  file: { base: number; end: number; last: number; burned: number },
): string | undefined {
  const head = d.head!;
  if (head.b < file.base || (head.b === file.base && head.l <= file.burned)) return undefined;
  if (head.b === file.base && head.l <= file.last && head.o + (d.length ?? 0) <= file.end) return undefined;
  return `its record of seqs ${head.f}-${head.l} (at byte ${d.at} of the journal) is damaged (${d.why}), and the log holds seqs up to ${file.last} only`;
}

function unreplayable(journal: string, logPath: string, problem: string): StoreError {
  return new StoreError(
    "brain_error",
    `journal ${journal}: ${problem}, so events the session acknowledged may be missing from log ${logPath} (the journal's other records were replayed). Check the log against the journal; then, to open the session with what its log holds, move the journal aside (mv ${journal} ${journal}.aside): until then every open of this log fails`,
  );
}

/** Whether the file's bytes at [at, end) are the start of `bytes` (a batch its owner wrote part of, then died). */
async function holdsPrefix(io: LogIO, fd: number, at: number, end: number, bytes: Buffer): Promise<boolean> {
  const n = Math.min(end - at, bytes.length);
  return n <= 0 || (await readFully(io, fd, at, n)).equals(bytes.subarray(0, n));
}

export async function lockOf(path: string, session: string): Promise<LogLock | undefined> {
  try {
    return await acquireLogLock(path, { session });
  } catch (err) {
    if (err instanceof LogLockedError) return undefined;
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined; // its directory is gone
    throw err;
  }
}
