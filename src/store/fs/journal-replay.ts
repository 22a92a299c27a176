// Replaying the journals (journal.ts) of processes that are gone: a record's bytes were durable in the journal
// and acknowledged, while the log's own file may have lost them in a crash. Each is written again at its place,
// idempotently (the same bytes at the same offset), when it reaches past the file's durable end; a record of a
// segment sealed since (sealed files are synced first), or one a log holds already, is skipped (its file synced all
// the same: a killed process's writes may be in the page cache only). A journal's torn tail (a round whose write
// a crash cut) is dropped: none of its records was acknowledged.
import fsp from "node:fs/promises";
import nodePath from "node:path";
import { crc32 } from "node:zlib";
import { StoreError } from "./errors.js";
import { FRAME_BYTES, JOURNAL_SUFFIX, MAGIC, type RecordHead } from "./journal.js";
import { type LogIO, writeAll } from "./log-io.js";
import { acquireLogLock, type LogLock, LogLockedError, liveHolder } from "./log-lock.js";
import { repairActive } from "./log-open.js";

/**
 * The journals a replay kept (a live process holds one of their logs), each with the logs it has records for
 * (resolved paths): what a store learnt of them, so that its later opens of other logs need not replay them.
 */
export type KeptJournals = Map<string, ReadonlySet<string>>;

export interface JournalRecord {
  head: RecordHead;
  bytes: Buffer;
}

/** The whole records of a journal's bytes, in order, up to the first torn or damaged one. */
export function parseJournal(buf: Buffer): JournalRecord[] {
  const out: JournalRecord[] = [];
  for (let at = 0; at + FRAME_BYTES <= buf.length; ) {
    if (buf.readUInt32LE(at) !== MAGIC) break;
    const [headLength, length, crc] = [
      buf.readUInt32LE(at + 4),
      buf.readUInt32LE(at + 8),
      buf.readUInt32LE(at + 12),
    ];
    const end = at + FRAME_BYTES + headLength + length;
    if (end > buf.length) break;
    const headBytes = buf.subarray(at + FRAME_BYTES, at + FRAME_BYTES + headLength);
    const bytes = buf.subarray(at + FRAME_BYTES + headLength, end);
    if (crc32(bytes, crc32(headBytes)) !== crc) break;
    out.push({ head: JSON.parse(headBytes.toString("utf8")) as RecordHead, bytes });
    at = end;
  }
  return out;
}

/**
 * Replays, then removes, every journal in `dir` whose process is gone (its lock is stale or missing), but `own`.
 * A live process's journal is left alone: its logs are its own. Run by every open of a log once it holds the
 * log's lock (`held`, which the replay then writes without taking it), not before: a journal's process may die
 * between a look at the journals and the lock, and the open would take over its dead lock and read the log
 * without the events only its journal holds. Under the home's replay lock, which an open waits for whenever
 * another journal is there: a journal being replayed is locked, and an open that went on past it could take a
 * log before the replay reached it.
 */
export async function replayJournals(
  dir: string,
  io: LogIO,
  own?: string,
  held?: string,
  kept?: KeptJournals,
): Promise<void> {
  const others = async () => {
    try {
      return (await fsp.readdir(dir)).filter((n) => n.endsWith(JOURNAL_SUFFIX) && n !== own);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return [];
      throw err;
    }
  };
  // A journal its own live process holds (its name starts with its pid) is not replayed: an open need not wait
  // for the home's replay lock because of it. Taking that lock, then the journal's, cost every open milliseconds
  // while another process journals in the home. It holds nothing `held` lacks: its process would hold `held`'s
  // lock still, or gave it up at a close that synced the file; dying after this look, it holds `held` no more.
  // A journal locked by any other pid is being replayed: wait. This process's pid is ambiguous (a store of it may
  // be replaying a journal of its own), so it takes the lock too.
  const ownedLive = async (name: string) => {
    const pid = Number(name.slice(0, name.indexOf("-")));
    return pid !== process.pid && (await liveHolder(nodePath.join(dir, name))) === pid;
  };
  const names = await others();
  const owned = await Promise.all(names.map(ownedLive));
  // As the records name their logs: resolved against the home.
  const heldPath = held === undefined ? undefined : nodePath.resolve(held);
  for (const name of kept?.keys() ?? []) if (!names.includes(name)) kept?.delete(name);
  // A journal an earlier replay kept is a dead process's: its records never change, and it has none for `held`.
  // Replayed again it would cost this open the replay lock, the journal's read and a sync of each log it names.
  const needless = (name: string, i: number) =>
    owned[i] || (heldPath !== undefined && kept?.get(name)?.has(heldPath) === false);
  if (names.every(needless)) return;
  const replaying = await replayLock(dir);
  if (!replaying) return; // the directory is gone: so are its journals
  try {
    for (const name of await others()) await replayOne(dir, name, io, heldPath, kept);
  } finally {
    await replaying.release();
  }
}

/**
 * The home's replay lock, waited for while another live process (or store of this one) holds it; undefined when
 * the directory is gone.
 */
async function replayLock(dir: string): Promise<LogLock | undefined> {
  for (;;) {
    try {
      return await acquireLogLock(nodePath.join(dir, "replay"), { session: "journal replay" });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      if (!(err instanceof LogLockedError)) throw err;
    }
    await new Promise((resolve) => setTimeout(resolve, 5)); // a replay takes a read and a write per log
  }
}

/**
 * Replays and removes the journal `name` of `dir`, unless its process lives (its lock is held). A log another live
 * process holds is skipped, and the journal kept: that process may have taken the log over from this journal's
 * dead one and be waiting for the replay lock to replay it itself; removed now, its records would be lost.
 */
async function replayOne(
  dir: string,
  name: string,
  io: LogIO,
  held: string | undefined,
  kept: KeptJournals | undefined,
): Promise<void> {
  const path = nodePath.join(dir, name);
  const lock = await lockOf(path, "journal");
  if (!lock) return;
  try {
    const records = parseJournal(await fsp.readFile(path));
    const byLog = new Map<string, JournalRecord[]>();
    for (const r of records) {
      const logPath = nodePath.resolve(nodePath.dirname(dir), r.head.p);
      byLog.set(logPath, [...(byLog.get(logPath) ?? []), r]);
    }
    let keep = false;
    for (const [logPath, list] of byLog)
      if (!(await replayLog(io, logPath, list, logPath === held))) keep = true;
    if (keep) {
      kept?.set(name, new Set(byLog.keys()));
      return;
    }
    kept?.delete(name);
    await fsp.rm(path, { force: true });
    await io.syncDir(dir);
  } finally {
    await lock.release();
  }
}

async function lockOf(path: string, session: string): Promise<LogLock | undefined> {
  try {
    return await acquireLogLock(path, { session });
  } catch (err) {
    if (err instanceof LogLockedError) return undefined;
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined; // its directory is gone
    throw err;
  }
}

/**
 * Writes `records` (one log's, in journal order) again where its active file lacks them; synced. False when a live
 * process holds the log (not `held`: the caller's, whose lock it holds).
 */
async function replayLog(
  io: LogIO,
  logPath: string,
  records: JournalRecord[],
  held: boolean,
): Promise<boolean> {
  try {
    await fsp.access(nodePath.dirname(logPath));
  } catch {
    return true; // the session was removed since
  }
  const session = records[0]!.head.s;
  const lock = held ? undefined : await lockOf(logPath, session);
  if (!held && !lock) return false;
  try {
    const opened = await repairActive(io, logPath, session, false);
    const { fd } = opened;
    try {
      let [end, last, wrote] = [opened.scan.end, opened.scan.lastSeq, false];
      const burned = opened.burned ?? 0;
      for (const { head, bytes } of [...records].sort((a, b) => a.head.f - b.head.f)) {
        if (head.b !== opened.base || head.l <= last || head.f <= burned) continue;
        if (head.o > end) {
          throw new StoreError(
            "brain_error",
            `${logPath}: the journal's record of seqs ${head.f}-${head.l} is at byte ${head.o}, past the log's end ${end}`,
          );
        }
        await writeAll(io, fd, bytes, head.o);
        [end, last, wrote] = [head.o + bytes.length, head.l, true];
      }
      if (wrote) await io.truncate(fd, end);
      // Synced even when the file held every record: a killed owner's writes are in the page cache, not on disk,
      // and once the journal is removed they would be nowhere durable. Not for a file this segment no longer is.
      if (wrote || records.some((r) => r.head.b === opened.base)) await io.datasync(fd);
    } finally {
      await io.close(fd);
    }
    return true;
  } finally {
    await lock?.release();
  }
}
