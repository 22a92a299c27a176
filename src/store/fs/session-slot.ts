// A session directory made ahead of need (a "slot"): under a fresh id, with native/, checkpoints/, a BLANK
// session.json (spaces) and an empty events.jsonl, every entry synced (files and both directories) and the log's
// lock taken, in the background. A new session with a Brain-chosen id takes it: its record is written over the
// blank (one durable write: no temp file, rename or directory sync, the entry being durable already) while its
// first event is committed into the log, so a create costs one journal commit, not several in a row. The blank
// is as long as a record usually is, so that write changes neither the file's size nor its blocks: on ext4 it
// is a data write and a cache flush, no journal commit of its own to queue behind the log's. JSON allows the
// spaces the record leaves after it; the next update of the record replaces the file.
//
// A session.json that is blank, or torn (a crash during that one write: never acknowledged), marks a slot, never
// a session: get() and list() skip it, and a store sweeps leftover slots away once (sweepUnacknowledged).
import { randomUUID } from "node:crypto";
import fs from "node:fs";
import fsp from "node:fs/promises";
import { removeDeadTemps } from "../../core/checkpoints/temps.js";
import type { InlineCommits } from "./inline-commits.js";
import type { Journal } from "./journal.js";
import { JsonlEventLog, readEventsFile } from "./jsonl-log.js";
import { allDone, type LogIO, writeDurably, writeFlags } from "./log-io.js";
import { acquireLogLock, type LogHolder, type LogLock } from "./log-lock.js";
import { firstSeqOf, listSealed } from "./segments.js";
import { SESSION_ID } from "./session-record.js";

export interface SlotPaths {
  dir: string;
  record: string;
  events: string;
  native: string;
  checkpoints: string;
}

export interface Slot {
  id: string;
  paths: SlotPaths;
  /** session.json, blank, opened with the log's write flags (one write makes it durable). */
  recordFd: number;
  /** events.jsonl, empty, opened with the log's write flags, for JsonlEventLog.open's `created`. */
  eventsFd: number;
  lock: LogLock;
}

export interface SlotOptions {
  root: string;
  io: LogIO;
  holder: LogHolder;
  paths: (id: string) => SlotPaths;
  /**
   * How long after a slot is taken (or found missing) the next one is made. Its syncs are journal commits the
   * new session's first turn would otherwise queue behind; a second later that turn has usually ended.
   */
  delayMs: number;
  /** The store's sweep of what killed processes left (sweepUnacknowledged), run once before the first slot. */
  sweep: () => Promise<void>;
}

/** A slot's blank session.json: one block, larger than most records (a larger one only grows the file). */
const BLANK_BYTES = 4096;

/** Flags of a slot's files: made here, never found. */
const EXCLUSIVE_CREATE = fs.constants.O_RDWR | fs.constants.O_CREAT | fs.constants.O_EXCL;

/** Keeps at most one slot ready for a store. */
export class SlotKeeper {
  private ready: Slot | undefined;
  private making: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  /** Set while close() runs: nothing is made meanwhile. */
  private closing = false;

  constructor(private readonly options: SlotOptions) {}

  /**
   * The ready slot, now this caller's, with what `build` made of its id (undefined if none is ready); the next
   * one is made later. If `build` throws, the slot stays ready.
   */
  take<T>(build: (id: string) => T): { slot: Slot; value: T } | undefined {
    const slot = this.ready;
    this.schedule();
    if (!slot) return undefined;
    const value = build(slot.id);
    this.ready = undefined;
    this.schedule();
    return { slot, value };
  }

  /** Makes the next slot after the delay, unless one is ready or on its way. */
  schedule(): void {
    if (this.ready || this.making || this.timer || this.closing) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.prepare();
    }, this.options.delayMs);
    // A slot never keeps a process alive.
    this.timer.unref();
  }

  /** Makes a slot now unless one is ready or on its way; resolves once none is on its way. */
  async prepare(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (!this.ready && !this.making && !this.closing) {
      this.making = this.make().finally(() => {
        this.making = undefined;
      });
    }
    await this.making;
  }

  /** Removes the unused slot (and one being made); a later take() starts again. */
  async close(): Promise<void> {
    this.closing = true;
    try {
      clearTimeout(this.timer);
      this.timer = undefined;
      await this.making;
      const slot = this.ready;
      this.ready = undefined;
      if (slot) await discardSlot(slot, this.options.io);
    } finally {
      this.closing = false;
    }
  }

  private async make(): Promise<void> {
    const { io } = this.options;
    await this.options.sweep();
    // A failure only means no slot: the next create takes the ordinary path.
    const slot = await makeSlot(this.options).catch(() => undefined);
    if (slot && this.closing) return discardSlot(slot, io);
    this.ready = slot;
  }
}

async function makeSlot({ root, io, holder, paths: pathsOf }: SlotOptions): Promise<Slot> {
  const id = randomUUID();
  const paths = pathsOf(id);
  await fsp.mkdir(root, { recursive: true, mode: 0o700 });
  await fsp.mkdir(paths.dir, { mode: 0o700 });
  const taken: { recordFd?: number; eventsFd?: number; lock?: LogLock } = {};
  try {
    // The lock before session.json exists: a sweep never sees this slot unlocked.
    taken.lock = await acquireLogLock(paths.events, { session: id, holder });
    const file = async (path: string, key: "recordFd" | "eventsFd", blank: number) => {
      const fd = await io.open(path, writeFlags(io, EXCLUSIVE_CREATE), 0o600);
      taken[key] = fd;
      if (blank > 0) await writeDurably(io, fd, Buffer.alloc(blank, " "), 0);
      await io.datasync(fd);
    };
    await allDone([
      fsp.mkdir(paths.native, { mode: 0o700 }),
      fsp.mkdir(paths.checkpoints, { mode: 0o700 }),
      file(paths.record, "recordFd", BLANK_BYTES),
      file(paths.events, "eventsFd", 0),
    ]);
    await allDone([io.syncDir(paths.dir), io.syncDir(root)]);
    return { id, paths, recordFd: taken.recordFd!, eventsFd: taken.eventsFd!, lock: taken.lock };
  } catch (err) {
    await discardSlot({ paths, ...taken }, io);
    throw err;
  }
}

/** Closes what a slot holds and removes its directory (it was never a session). */
export async function discardSlot(
  slot: { paths: SlotPaths; recordFd?: number; eventsFd?: number; lock?: LogLock },
  io: LogIO,
): Promise<void> {
  for (const fd of [slot.recordFd, slot.eventsFd]) if (fd !== undefined) await io.close(fd).catch(() => {});
  await fsp.rm(slot.paths.dir, { recursive: true, force: true }).catch(() => {});
  await slot.lock?.release();
}

/**
 * A new session in `slot`: its log opened on the slot's file and lock (no I/O), and its record written into the
 * slot's blank session.json. `durable` settles once that write is; the caller commits the log's first batch
 * meanwhile. `fail` undoes the session (the store removes its directory) and gives the error to throw.
 */
export async function createInSlot(
  slot: Slot,
  text: string,
  { io, holder, inline, journal }: { io: LogIO; holder: LogHolder; inline: InlineCommits; journal?: Journal },
  fail: (err: unknown) => Promise<Error>,
): Promise<{ log: JsonlEventLog; durable: Promise<void> }> {
  let log: JsonlEventLog;
  try {
    log = await JsonlEventLog.open(slot.paths.events, slot.id, io, {
      holder,
      created: { fd: slot.eventsFd, lock: slot.lock },
      inline,
      ...(journal ? { journal } : {}),
    });
  } catch (err) {
    await io.close(slot.recordFd).catch(() => {});
    await io.close(slot.eventsFd).catch(() => {});
    await slot.lock.release();
    throw await fail(err);
  }
  const durable = (async () => {
    try {
      await writeDurably(io, slot.recordFd, Buffer.from(text), 0);
    } finally {
      await io.close(slot.recordFd).catch(() => {});
    }
  })().catch(async (err: unknown) => {
    await log.close().catch(() => {});
    throw await fail(err);
  });
  return { log, durable };
}

/** How every record's text begins (recordText: a pretty-printed object); a torn one begins so too. */
const RECORD_OPENING = '{\n  "';

/**
 * Whether session.json's text marks a slot: blank, or torn by a crash during the one write that fills it (a NUL
 * where a page was not written, as JSON never holds a raw NUL; or a record's beginning that does not parse).
 * Anything else that is not a valid record is damage, for the caller to report.
 */
export function isSlotText(text: string): boolean {
  // What the record did not cover of the blank (spaces), or where a cut record ends.
  const written = text.trimEnd();
  if (written.length === 0 || written.includes("\0")) return true;
  if (written.length < RECORD_OPENING.length) return RECORD_OPENING.startsWith(written);
  if (!written.startsWith(RECORD_OPENING)) return false;
  try {
    JSON.parse(written);
    return false;
  } catch {
    return true;
  }
}

/**
 * A record this old whose log holds no event was made by a create that never finished: one still under way has
 * written its record and taken its log's lock within milliseconds.
 */
export const UNACKNOWLEDGED_MS = 60_000;

/**
 * Removes the session directories a process left behind: its slots (it stopped before close(), or crashed while
 * a session was being made in one), and the sessions it was making when it was killed (a fork restoring its
 * checkpoint, a handoff seeding): a record whose log holds no event, its session.opened never written, was never
 * acknowledged, yet would be listed and fail its first turn; a directory without a record whose log holds none
 * (a create killed before renaming its record into place) is never listed, but was kept for good. A directory
 * some live process holds is left alone (its lock), and so is one whose log holds more than a first event (a
 * slot's) or any event (a record's, or a directory's without one: damage). Also the directories of deletes killed
 * part way (removeSessionDir).
 */
export async function sweepUnacknowledged(
  root: string,
  pathsOf: (id: string) => SlotPaths,
  io: LogIO,
): Promise<void> {
  await removeDeadTemps(root);
  let names: string[];
  try {
    names = (await fsp.readdir(root, { withFileTypes: true }))
      .filter((e) => e.isDirectory() && SESSION_ID.test(e.name))
      .map((e) => e.name);
  } catch {
    return;
  }
  for (const id of names) {
    const paths = pathsOf(id);
    // null: no record at all (a create killed before it renamed the record into place).
    const text = await fsp
      .readFile(paths.record, "utf8")
      .catch((err: NodeJS.ErrnoException) => (err.code === "ENOENT" ? null : undefined));
    if (text === undefined) continue;
    const slot = text !== null && isSlotText(text);
    const unacknowledged = text === null ? oldEnough(paths.dir) : unacknowledgedRecord(paths.record, text);
    if (!slot && !(await unacknowledged)) continue;
    // Looked at without the lock first (readers never take it): a log holding more events than such a session's
    // keeps them, so the locked look would keep the session too. Every old session's lock, taken and released by
    // every command's sweep, cost a dozen trips through the thread pool per stored session and, while held,
    // refused anyone's open of it (LogLockedError).
    const seen = await countEvents(paths.events, io);
    if (seen === undefined || seen > (slot ? 1 : 0)) continue;
    let lock: LogLock;
    try {
      lock = await acquireLogLock(paths.events, { session: id });
    } catch {
      continue;
    }
    try {
      const events = await countEvents(paths.events, io);
      if (
        events !== undefined &&
        events <= (slot ? 1 : 0) &&
        (slot || !(await everWritten(paths.events, io)))
      ) {
        await fsp.rm(paths.dir, { recursive: true, force: true });
      }
    } finally {
      await lock.release();
    }
  }
}

/** Whether the log held events once that retention took (its sealed segments, or a first seq past 1). */
async function everWritten(events: string, io: LogIO): Promise<boolean> {
  if ((await listSealed(events).catch(() => [])).length > 0) return true;
  return (await firstSeqOf(events, io).catch(() => 2)) > 1;
}

/** A whole record written long enough ago that a create still making it would have taken its lock. */
async function unacknowledgedRecord(path: string, text: string): Promise<boolean> {
  let record: unknown;
  try {
    record = JSON.parse(text);
  } catch {
    return false; // damage, for get() to report
  }
  // Closed, so opened first (its session.opened logged): acknowledged, and its log is not read. Most stored
  // sessions are (each CLI command records its own closed), and each command's sweep looks at every one.
  if ((record as { status?: unknown } | null)?.status === "closed") return false;
  return oldEnough(path);
}

/** Written (a file) or last given an entry (a directory) long enough ago that no create still makes it. */
async function oldEnough(path: string): Promise<boolean> {
  const stat = await fsp.stat(path).catch(() => undefined);
  return stat !== undefined && Date.now() - stat.mtimeMs >= UNACKNOWLEDGED_MS;
}

/** At most 2: enough to tell a first event from more; undefined if the log cannot be read. */
async function countEvents(path: string, io: LogIO): Promise<number | undefined> {
  const exists = await fsp.stat(path).then(
    () => true,
    () => false,
  );
  if (!exists) return 0;
  return readEventsFile(path, io, { limit: 2 }).then(
    (events) => events.length,
    () => undefined,
  );
}
