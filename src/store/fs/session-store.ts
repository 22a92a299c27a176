// The embedded session store: <home>/sessions/<id>/{session.json, events.jsonl, native/, checkpoints/}.

import { randomUUID } from "node:crypto";
import fs from "node:fs";
import fsp from "node:fs/promises";
import nodePath from "node:path";
import { OneAtATime } from "../../core/one-at-a-time.js";
import type { CompactResult, RetireResult, SegmentPolicy } from "../../core/retention.js";
import {
  type LogTail,
  listedTenant,
  type NewSessionRecord,
  type RecordPatch,
  type SessionSummary,
  type UnreadableSession,
} from "../../core/store.js";
import type { SessionEvent } from "../../protocol/events.js";
import { compactLog } from "./compact.js";
import { FsDeletedSessions } from "./deleted-sessions.js";
import { disk, diskError, StoreError } from "./errors.js";
import { InlineCommits } from "./inline-commits.js";
import type { Journal } from "./journal.js";
import { JsonlEventLog, readEventsFile } from "./jsonl-log.js";
import { allDone, type LogIO, nodeLogIO, writeFlags } from "./log-io.js";
import { acquireLogLock, type LogHolder, type LogLock } from "./log-lock.js";
import type { Replay } from "./log-open.js";
import { lastSeqOfFile, lookAtLog, tailOfFile } from "./log-read.js";
import { journalByDefault } from "./log-tuning.js";
import { RecordCache } from "./record-cache.js";
import { listRecords } from "./record-list.js";
import { removeSessionDir } from "./remove-tree.js";
import { archiveDir, retireSegments } from "./retire.js";
import { firstSeqOf, listSealed } from "./segments.js";
import {
  checkRecord,
  newRecord,
  parseRecord,
  recordText,
  rewrittenRecord,
  SESSION_ID,
  type SessionRecord,
  writeRecordFile,
} from "./session-record.js";
import { createInSlot, isSlotText, SlotKeeper, sweepUnacknowledged } from "./session-slot.js";
import { StoreJournal } from "./store-journal.js";
import { fileBytes, logFileBytes } from "./stored-bytes.js";

export interface SessionPaths {
  dir: string;
  record: string;
  events: string;
  native: string;
  checkpoints: string;
}

export type NewSession = NewSessionRecord;
export type SessionPatch = RecordPatch | ((current: SessionRecord) => RecordPatch);

export interface StoreOptions {
  /**
   * Keep one session directory made ahead of need (./session-slot.ts), so that a new session with a Brain-chosen
   * id costs one durable write instead of several in a row: for a long-lived host (as warm runners are).
   */
  spareSlot?: boolean;
  /** How long after a slot is taken the next one is made (default 1 s: after the new session's first turn). */
  slotDelayMs?: number;
  /** Which awaited commits skip the thread pool (default: a fresh InlineCommits; tests give one on their own clock). */
  inline?: InlineCommits;
  /** Commit through one write-ahead journal for all the store's logs (./journal.ts; default journalByDefault(): off). */
  journal?: boolean;
  /**
   * A test's seam: runs as an open, compaction or retire of `id` is about to take its log's lock (the journal
   * tests kill the log's owner there).
   */
  beforeLogLock?: (id: string) => Promise<void>;
}

export class FsSessionStore {
  readonly root: string;
  /** Per-session chain, so two updates in flight cannot both read the old record and lose one patch. */
  private readonly updates = new OneAtATime();
  /** Sessions create() made here whose log file it made durable and that have not been opened since. */
  private readonly createdLogs = new Set<string>();
  private readonly slots: SlotKeeper | undefined;
  /** What every log opens with: who holds it; one InlineCommits and one journal for all the store's logs; replay. */
  private readonly logs: { holder: LogHolder; inline: InlineCommits; journal?: Journal; replay: Replay };
  private readonly journals: StoreJournal;
  private readonly beforeLogLock: ((id: string) => Promise<void>) | undefined;
  /** The records read so far, served again while their session.json is unchanged (./record-cache.ts says why). */
  private readonly records = new RecordCache();
  private sweeping: Promise<void> | undefined;
  /** The tombstones of keyed deletes (src/core/deleted-sessions.ts). */
  readonly deletes: FsDeletedSessions;

  constructor(
    readonly home: string,
    private readonly io: LogIO = nodeLogIO,
    /** Who this process is, in the lock of each log it opens (the daemon sets its URL once it listens). */
    private readonly holder: LogHolder = { kind: "process" },
    options: StoreOptions = {},
  ) {
    this.root = nodePath.join(home, "sessions");
    this.deletes = new FsDeletedSessions(home);
    this.journals = new StoreJournal(home, io, options.journal ?? journalByDefault());
    this.beforeLogLock = options.beforeLogLock;
    const [{ journal, ready: replay }, inline] = [this.journals, options.inline ?? new InlineCommits()];
    this.logs = { holder, inline, replay, ...(journal ? { journal } : {}) };
    this.io = io = this.journals.io;
    const [root, paths, delayMs] = [this.root, (id: string) => this.paths(id), options.slotDelayMs ?? 1000];
    const sweep = this.sweepUnacknowledged;
    if (options.spareSlot) this.slots = new SlotKeeper({ root, io, holder, paths, delayMs, sweep });
  }

  /** Makes the spare session directory now if there is none (with spareSlot); resolves once it is ready. */
  prepareSlot = async (): Promise<void> => this.slots?.prepare();

  /** Removes, once, the sessions a killed process left half made (./session-slot.ts); never fails. */
  sweepUnacknowledged = (): Promise<void> =>
    (this.sweeping ??= sweepUnacknowledged(this.root, (id) => this.paths(id), this.io).catch(() => {}));

  /** Removes the unused slot, if any (the store stays usable: a later create makes one again). */
  close = async (): Promise<void> => {
    await this.sweeping;
    await this.slots?.close();
    await this.journals.close();
  };

  paths(id: string): SessionPaths {
    if (typeof id !== "string" || !SESSION_ID.test(id)) {
      throw new StoreError(
        "bad_request",
        `bad session id ${JSON.stringify(id)}: must match ${SESSION_ID.source}`,
      );
    }
    const dir = nodePath.join(this.root, id);
    return {
      dir,
      record: nodePath.join(dir, "session.json"),
      events: nodePath.join(dir, "events.jsonl"),
      native: nodePath.join(dir, "native"),
      checkpoints: nodePath.join(dir, "checkpoints"),
    };
  }

  async create(input: NewSession): Promise<SessionRecord> {
    const { record, paths } = await this.newDir(input);
    try {
      // Every entry of the new directory at once (the log's file too), then both directories synced together: a
      // new session's durability costs one file sync and two directory syncs that overlap, not five in a row.
      await allDone([
        ...this.entries(paths, record),
        this.io.open(paths.events, EXCLUSIVE_CREATE, 0o600).then((fd) => this.io.close(fd)),
      ]);
      await this.syncDirs(paths);
      this.createdLogs.add(record.id);
    } catch (err) {
      throw await this.unmake(paths, err);
    }
    return record;
  }

  /**
   * create() and openLog() in one: the log's lock is taken and its file opened with the rest of the directory, so
   * the open reads nothing, and the caller writes the log's first batch while both directories sync. `durable`
   * settles once the record and the log's file are durable; if it fails, the log is closed and the session gone.
   */
  async createOpen(
    input: NewSession,
  ): Promise<{ record: SessionRecord; log: JsonlEventLog; durable: Promise<void> }> {
    // A client-chosen id names its own directory: only a Brain-chosen one can be a slot's.
    const inSlot =
      input.id === undefined ? this.slots?.take((id) => newRecord(id, input, badRequest)) : undefined;
    if (inSlot) {
      const { slot, value: record } = inSlot;
      const fail = (err: unknown) => this.unmake(slot.paths, err);
      const made = await createInSlot(slot, recordText(record), { io: this.io, ...this.logs }, fail);
      return { record, ...made };
    }
    const { record, paths } = await this.newDir(input);
    const taken: { fd?: number; lock?: LogLock } = {};
    let log: JsonlEventLog;
    try {
      await allDone([
        ...this.entries(paths, record),
        this.io.open(paths.events, writeFlags(this.io, EXCLUSIVE_CREATE), 0o600).then((fd) => {
          taken.fd = fd;
        }),
        acquireLogLock(paths.events, { session: record.id, holder: this.holder }).then((lock) => {
          taken.lock = lock;
        }),
      ]);
      const created = { fd: taken.fd!, lock: taken.lock! };
      log = await JsonlEventLog.open(paths.events, record.id, this.io, { ...this.logs, created });
    } catch (err) {
      if (taken.fd !== undefined) await this.io.close(taken.fd).catch(() => {});
      await taken.lock?.release();
      throw await this.unmake(paths, err);
    }
    const durable = this.syncDirs(paths).catch(async (err: unknown) => {
      await log.close().catch(() => {});
      throw await this.unmake(paths, err);
    });
    return { record, log, durable };
  }

  /** The record, or undefined for none (or a slot: ./session-slot.ts). One stat when it is unchanged since read. */
  async get(id: string): Promise<SessionRecord | undefined> {
    return this.records.get(id, this.paths(id).record);
  }

  /** Every session's summary, oldest first (only `tenant`'s, given one): ./record-list.ts says what it costs. */
  async list(unreadable?: (session: UnreadableSession) => void, tenant?: string): Promise<SessionSummary[]> {
    return listRecords(this.root, this.records, (id) => this.paths(id), unreadable, tenant);
  }

  async update(id: string, patch: SessionPatch): Promise<SessionRecord> {
    const paths = this.paths(id);
    return this.updates.run(id, async () => {
      // The file itself, not the cache: what it holds beyond the record this node knows is written back.
      const text = await disk("read", paths.record, () => fsp.readFile(paths.record, "utf8").catch(notFound));
      if (text === false || isSlotText(text)) throw new StoreError("bad_request", `session ${id} not found`);
      const current = parseRecord(paths.record, text, id);
      const change = typeof patch === "function" ? patch(current) : patch;
      const record = checkInput(`session ${id}`, {
        ...current,
        ...change,
        id: current.id,
        created_at: current.created_at,
      });
      this.records.forget(id);
      await writeRecordFile(this.io, paths.record, rewrittenRecord(JSON.parse(text), record, change));
      this.records.index(id, listedTenant(record));
      return record;
    });
  }

  /** Deletes the session and everything in its directory. Removing a missing session is not an error. */
  async remove(id: string): Promise<void> {
    const { dir, events } = this.paths(id);
    if (!(await disk("remove", dir, () => fsp.stat(dir).then(() => true, notFound)))) return;
    // Never from under a writer: a session another process has open is refused (LogLockedError).
    const lock = await acquireLogLock(events, { session: id, holder: this.holder });
    this.createdLogs.delete(id);
    this.records.drop(id);
    // In turn with record writes (a close's, racing a delete, failed rm: ENOTEMPTY); released even after a failure.
    const remove = () => disk("remove", dir, () => removeSessionDir(dir, this.io));
    await this.updates.run(id, remove).finally(() => lock.release());
  }

  async openLog(id: string): Promise<JsonlEventLog> {
    // Opened once as created (its record known to exist: no read), then like any other log: what a later open
    // finds may have been made elsewhere.
    const created = this.createdLogs.delete(id);
    if (!created && !(await this.get(id))) throw new StoreError("bad_request", `session ${id} not found`);
    await this.beforeLogLock?.(id);
    return JsonlEventLog.open(this.paths(id).events, id, this.io, {
      ...this.logs,
      ...(created ? { durableEntry: true } : {}),
    });
  }

  /**
   * Compacts a session's log that nobody wrote for `idleMs`. `events.jsonl.compacted` holds the size and mtime
   * the last look left (compacted, or refused for a request or turn still open), so an unchanged log is only
   * stat'ed on later sweeps, never read again.
   */
  async compact(id: string, options: { idleMs: number }): Promise<CompactResult | undefined> {
    const { events } = this.paths(id);
    const marker = `${events}.compacted`;
    const before = await fsp.stat(events).catch(notFound);
    if (!before || Date.now() - before.mtimeMs < options.idleMs) return undefined;
    const stamp = (st: { size: number; mtimeMs: number }) => `${st.size}:${st.mtimeMs}`;
    if ((await fsp.readFile(marker, "utf8").catch(() => "")) === stamp(before)) return undefined;
    let result: CompactResult | undefined;
    await this.beforeLogLock?.(id);
    try {
      // The journals replayed into the log once its lock is held (as an open does), before it is rewritten.
      result = await compactLog(events, id, { io: this.io, holder: this.holder, replay: this.logs.replay });
    } catch (err) {
      // Locked: open elsewhere, the next sweep looks again. A request or turn still open: skip until it changes.
      if ((err as StoreError).code === "locked") return undefined;
      if ((err as StoreError).code !== "bad_request") throw err;
    }
    const after = await fsp.stat(events);
    await disk("mark compacted", marker, () => fsp.writeFile(marker, stamp(after)));
    return result;
  }

  /** Archives or drops the oldest sealed segments of a session's log (see ./retire.ts); undefined if none went. */
  async retire(id: string, policy: SegmentPolicy): Promise<RetireResult | undefined> {
    const { events } = this.paths(id);
    // Most logs never roll: a sweep costs them one directory read, not a lock taken and given back.
    const archived = await fsp.stat(archiveDir(events)).then(() => true, notFound);
    if (!archived && (await listSealed(events)).length === 0) return undefined;
    await this.beforeLogLock?.(id);
    try {
      const result = await retireSegments(events, id, policy, {
        io: this.io,
        holder: this.holder,
        replay: this.logs.replay,
      });
      return result.archived + result.dropped > 0 ? result : undefined;
    } catch (err) {
      // Open elsewhere: the next sweep looks again.
      if ((err as StoreError).code === "locked") return undefined;
      throw err;
    }
  }

  /** The first seq a session's log still holds (1 unless retention took its oldest segments), without its lock. */
  async firstSeq(id: string): Promise<number> {
    return firstSeqOf(this.paths(id).events, this.io);
  }

  /** The sizes of the log's files on disk: its active segment and the sealed ones, without its lock. */
  logBytes(id: string): Promise<number> {
    return logFileBytes(this.paths(id).events);
  }

  recordBytes(id: string): Promise<number> {
    return fileBytes(this.paths(id).record);
  }

  /** The active segment's mtime: every batch written (or segment begun) sets it, compaction keeps it. */
  async updatedAt(id: string): Promise<string | undefined> {
    return (await this.logLook(id)).updatedAt;
  }

  logLook(id: string) {
    return lookAtLog(this.paths(id).events);
  }

  /** The last seq on disk, from the log's last segment only, without its lock. */
  lastSeq(id: string): Promise<number> {
    return lastSeqOfFile(this.paths(id).events, this.io, id);
  }

  /** The last seq and the open requests on disk, from the log's last segment only, without its lock. */
  async tail(id: string): Promise<LogTail> {
    const { seq, requests } = await tailOfFile(this.paths(id).events, this.io, id);
    return { lastSeq: seq, requests };
  }

  /** The events on disk, read without the log's lock: a reader never stands in a writer's way. */
  async readEvents(id: string, range: { after?: number; limit?: number } = {}): Promise<SessionEvent[]> {
    return readEventsFile(this.paths(id).events, this.io, range);
  }

  /** A new session's directory, made exclusively: an id in use is the caller's mistake. */
  private async newDir(input: NewSession): Promise<{ record: SessionRecord; paths: SessionPaths }> {
    const id = input.id ?? randomUUID();
    const paths = this.paths(id);
    const record = newRecord(id, input, badRequest);
    await disk("create", this.root, () => fsp.mkdir(this.root, { recursive: true, mode: 0o700 }));
    try {
      await fsp.mkdir(paths.dir, { mode: 0o700 });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "EEXIST") {
        throw new StoreError("bad_request", `session ${id} already exists`);
      }
      throw diskError("create", paths.dir, err);
    }
    return { record, paths };
  }

  /** The entries of a new session's directory besides its log, made at once; the record made durable by its dir sync. */
  private entries(paths: SessionPaths, record: SessionRecord): Promise<unknown>[] {
    return [
      fsp.mkdir(paths.native, { mode: 0o700 }),
      fsp.mkdir(paths.checkpoints, { mode: 0o700 }),
      writeRecordFile(this.io, paths.record, record, { syncDir: false }),
    ];
  }

  /** The new session's directory and the sessions directory holding it, synced together. */
  private syncDirs(paths: SessionPaths): Promise<void> {
    return allDone([this.io.syncDir(paths.dir), this.io.syncDir(this.root)]);
  }

  /** Leaves no half-made session behind to be mistaken for a real one; returns the error to throw. */
  private async unmake(paths: SessionPaths, err: unknown): Promise<StoreError> {
    await fsp.rm(paths.dir, { recursive: true, force: true }).catch(() => {});
    return err instanceof StoreError ? err : diskError("create", paths.dir, err);
  }
}

const badRequest = (message: string) => new StoreError("bad_request", message);

/** A new session's log file: made empty by create(), so one directory sync covers its entry with the rest. */
const EXCLUSIVE_CREATE = fs.constants.O_RDWR | fs.constants.O_CREAT | fs.constants.O_EXCL;

function checkInput(what: string, value: unknown): SessionRecord {
  return checkRecord(what, value, badRequest);
}

function notFound(err: NodeJS.ErrnoException): false {
  if (err.code === "ENOENT") return false;
  throw err;
}
