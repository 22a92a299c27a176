// Replaying the journals (journal.ts) of processes that are gone: a record's bytes were durable in the journal
// and acknowledged, while the log's own file may have lost them in a crash. Each is written again at its place,
// idempotently (the same bytes at the same offset), when it reaches past the file's durable end; a record of a
// segment sealed since (sealed files are synced first), or one a log holds already, is skipped (its file synced all
// the same: a killed process's writes may be in the page cache only). A journal's torn tail (a round whose write
// a crash cut) is dropped: none of its records was acknowledged (journal-parse.ts).
// A journal that cannot be replayed whole fails only the opens of the logs it cannot prove whole, and stays for
// them (journal-replay-log.ts); every other log it names gets its records. One whose damage hides which log it
// was for, or that cannot be read at all, is put aside once every record it could read is replayed: see putAside.
import fsp from "node:fs/promises";
import nodePath from "node:path";
import { osMessage, StoreError } from "./errors.js";
import { JOURNAL_SUFFIX } from "./journal.js";
import { type DamagedRecord, readJournal } from "./journal-parse.js";
import { type LogRecords, lockOf, replayLog } from "./journal-replay-log.js";
import type { LogIO } from "./log-io.js";
import { acquireLogLock, type LogLock, LogLockedError, liveHolder } from "./log-lock.js";

export { type JournalRecord, parseJournal } from "./journal-parse.js";

/**
 * The journals a replay kept, each with the logs it kept them for (resolved paths): held by a live process, or
 * failed (their opens fail while it is there). What a store learnt of them, so that its later opens of other logs
 * need not replay them: the journal of a dead process never changes, and its other logs have their records.
 */
export type KeptJournals = Map<string, ReadonlySet<string>>;

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
  let failed: StoreError | undefined;
  try {
    for (const name of await others()) failed ??= await replayOne(dir, name, io, heldPath, kept);
  } finally {
    await replaying.release();
  }
  if (failed) throw failed;
}

/**
 * Writes back into the log at `held` (its lock held) what this process's live journal `journal` holds of it and
 * its file lacks, synced: after a sync of the file failed (Journal.poison). Rounds written meanwhile are other
 * logs' (a torn one at its end is dropped as any): this one is closed, every record of it durable.
 */
export async function replayOwn(journal: string, io: LogIO, held: string): Promise<void> {
  const [home, heldPath] = [nodePath.dirname(nodePath.dirname(journal)), nodePath.resolve(held)];
  let bytes: Buffer;
  try {
    bytes = await fsp.readFile(journal);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return; // never written
    throw err;
  }
  const records = readJournal(bytes).records.filter((r) => nodePath.resolve(home, r.head.p) === heldPath);
  if (records.length === 0) return;
  const log = { session: records[0]!.head.s, records, damaged: [] };
  const replayed = await replayLog(io, journal, heldPath, log, true);
  if (replayed instanceof StoreError) throw replayed;
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
 * Replays the journal `name` of `dir`, unless its process lives (its lock is held), and removes it, unless a log of
 * it is held by another live process (that process may have taken the log over from this journal's dead one and be
 * waiting for the replay lock to replay it itself; removed now, its records would be lost) or failed. Returns how
 * `held`'s replay failed, if it did; another log's failure is left to its own opens, and warned of.
 */
async function replayOne(
  dir: string,
  name: string,
  io: LogIO,
  held: string | undefined,
  kept: KeptJournals | undefined,
): Promise<StoreError | undefined> {
  const path = nodePath.join(dir, name);
  const lock = await lockOf(path, "journal");
  if (!lock) return undefined;
  try {
    let bytes: Buffer;
    try {
      bytes = await fsp.readFile(path);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? "";
      kept?.delete(name);
      // Gone: its process closed it (removed, then its lock let go) since the look.
      if (code === "ENOENT") return undefined;
      if (BUSY.has(code)) throw err; // this process's trouble, not the journal's: the next open tries again
      await putAside(dir, name, io, `cannot be read (${osMessage(err)}): none of its records was replayed`);
      return undefined;
    }
    const { records, damaged } = readJournal(bytes);
    const logs = new Map<string, LogRecords>();
    const of = (p: string, session: string) => {
      const logPath = nodePath.resolve(nodePath.dirname(dir), p); // as the records name their logs
      const log = logs.get(logPath) ?? { session, records: [], damaged: [] };
      logs.set(logPath, log);
      return log;
    };
    for (const r of records) of(r.head.p, r.head.s).records.push(r);
    const unknown: DamagedRecord[] = [];
    for (const d of damaged) d.head ? of(d.head.p, d.head.s).damaged.push(d) : unknown.push(d);
    const stay = new Set<string>();
    let failed: StoreError | undefined;
    for (const [logPath, log] of logs) {
      const replayed = await replayLog(io, path, logPath, log, logPath === held);
      if (replayed === "done") continue;
      stay.add(logPath);
      if (replayed === "held") continue;
      if (logPath === held) failed = replayed;
      else process.emitWarning(replayed.message, { code: "BRAIN_JOURNAL_UNREPLAYABLE" });
    }
    const unread = unknown.map((d) => `${d.why} at byte ${d.at}`).join("; ");
    if (stay.size > 0) {
      kept?.set(name, stay);
      if (unread)
        process.emitWarning(`journal ${path} is damaged where it names no log it can tell (${unread})`);
      return failed;
    }
    kept?.delete(name);
    if (unread)
      await putAside(
        dir,
        name,
        io,
        `is damaged where it names no log it can tell (${unread}): every record it could read was replayed`,
      );
    else await fsp.rm(path, { force: true });
    await io.syncDir(dir);
    return undefined;
  } finally {
    await lock.release();
  }
}

/** Errors of the reading process, not of the journal: putting it aside for them would be wrong. */
const BUSY = new Set(["EMFILE", "ENFILE", "ENOMEM", "EAGAIN", "EINTR"]);

/**
 * Renames a journal it cannot tell all the logs of aside, as `<name>.unreadable-<time>` (no more a journal a
 * replay reads), and warns. Chosen over failing: failing would fail every open in the home (which logs a journal
 * names is all that tells an open whether it is concerned), for a loss only a crash of the machine makes real.
 * What it risks: events a dead process acknowledged whose records are what cannot be read, and whose log's file
 * lacks them, which happens only when the machine went down before that file was synced (a process merely killed
 * left them in the page cache, and so in the file). The file is kept, for an operator to look into.
 */
async function putAside(dir: string, name: string, io: LogIO, why: string): Promise<void> {
  const path = nodePath.join(dir, name);
  const aside = nodePath.join(dir, `${name}.unreadable-${new Date().toISOString().replace(/[:.]/g, "-")}`);
  await fsp.rename(path, aside);
  await io.syncDir(dir);
  process.emitWarning(
    `journal ${path} ${why}. It was moved aside to ${aside}, so that the home's sessions open. What it could not read may have held events a process that died had acknowledged, which their log lacks if the machine went down too: check the sessions that process was writing (its pid starts the journal's name) against it, then remove it`,
    { code: "BRAIN_JOURNAL_UNREADABLE" },
  );
}
