// session.json records kept in memory by the store instance that read them, each with the stat it was read at, so
// listing thousands of sessions costs one stat per file, not a read and a schema check each.
//
// Why stat and not "our own writes keep it fresh": the embedded store is shared. A `brain run`, the CLI or a
// second daemon on the same $BRAIN_HOME each has its own FsSessionStore and writes session.json directly; a cache
// fed only by this instance's writes would serve their changes stale forever. Every write of session.json is
// tmp + rename (a new inode, new ctime and mtime), so an entry is served from memory only while the file's inode,
// size, mtime and ctime (nanoseconds) are still those it was read at; anything else reads and checks it again.
// This instance's own writes drop their entry rather than store the new record: a stat taken after our rename
// could already be another process's newer file, and caching our record under its stat would pin a stale one.
//
// Why bounded by bytes: a record's config may be megabytes (a runner's open frame may be 4 MiB) and a tenant may
// keep thousands of sessions. Every entry keeps the record's summary (what a list needs: small whatever the config
// holds); the whole record is kept only while it is small and the small ones kept stay within KEPT_BYTES, the
// least recently used dropped first. Anything else is read from its file again when asked for, and reads in
// flight together hold at most READING_BYTES of session.json (a list of many large records reads a few at a time).
//
// Why a tenant index beside: one tenant's list must not stat and read every other tenant's records (10,000 of
// another tenant's would make each of its lists cost them all). A session's tenant is set when it is made and no
// update changes it, so the tenant each record was last read with stays true while its directory is on disk; a
// list of one tenant looks only at that tenant's sessions and those not read yet. Kept for every session ever read
// here (a few bytes each), not bounded like the records: dropped, a session would be read by every tenant's list.
import type { BigIntStats } from "node:fs";
import fsp from "node:fs/promises";
import { listedTenant, type SessionSummary } from "../../core/store.js";
import { diskError } from "./errors.js";
import { deepFreeze, parseRecord, type SessionRecord, summaryOf } from "./session-record.js";
import { isSlotText } from "./session-slot.js";

/** Records whose session.json is larger than this are never kept whole (most are a few KiB). */
const KEEP_RECORD_BYTES = 64 * 1024;
/** Bytes of session.json kept whole in all, for the records read most recently. */
const KEPT_BYTES = 8 * 1024 * 1024;
/** Bytes of session.json read and checked at once; a larger file is read alone. */
const READING_BYTES = 8 * 1024 * 1024;

interface Cached {
  stamp: string;
  summary: SessionSummary;
  /** The whole record, while kept (see KEPT_BYTES). */
  record?: SessionRecord;
}

interface Read {
  record: SessionRecord;
  summary: SessionSummary;
}

const stampOf = (st: BigIntStats) => `${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;

export class RecordCache {
  private readonly entries = new Map<string, Cached>();
  /** Each session's tenant, as its record was last read (or written) here. */
  private readonly tenants = new Map<string, string>();
  /** The ids whose record is kept whole, least recently used first, with their file's size. */
  private readonly kept = new Map<string, number>();
  private keptBytes = 0;
  private readingBytes = 0;
  private readonly waiting: (() => void)[] = [];

  /** The record in `file`, from memory while the file is unchanged and kept; undefined when missing or a slot's. */
  async get(id: string, file: string): Promise<SessionRecord | undefined> {
    return (await this.look(id, file, true))?.record;
  }

  /** The summary of the record in `file`, from memory while the file is unchanged; as get() otherwise. */
  async summary(id: string, file: string): Promise<SessionSummary | undefined> {
    return (await this.look(id, file, false))?.summary;
  }

  /** Drops a session's entry: this store wrote its file (its tenant stays known: no write changes it). */
  forget(id: string): void {
    this.entries.delete(id);
    this.unkeep(id);
  }

  /** Drops all that is known of a session: its directory is gone (a new one of that id may be anyone's). */
  drop(id: string): void {
    this.forget(id);
    this.tenants.delete(id);
  }

  /** Drops the entries of sessions no longer on disk (removed by another process), given those that are. */
  keepOnly(ids: ReadonlySet<string>): void {
    for (const id of this.entries.keys()) if (!ids.has(id)) this.drop(id);
    for (const id of this.tenants.keys()) if (!ids.has(id)) this.drop(id);
  }

  /** The session's tenant as last read or written here; undefined when not known yet. */
  tenantOf(id: string): string | undefined {
    return this.tenants.get(id);
  }

  /** Records the session's tenant: its record was written here, or told of as unreadable. */
  index(id: string, tenant: string): void {
    this.tenants.set(id, tenant);
  }

  private async look(id: string, file: string, whole: boolean): Promise<Partial<Read> | undefined> {
    const st = await fsp.stat(file, { bigint: true }).catch((err) => this.missing(id, file, err));
    if (!st) return undefined;
    const stamp = stampOf(st);
    const cached = this.entries.get(id);
    if (cached?.stamp === stamp && (cached.record || !whole)) {
      if (cached.record) this.keep(id, Number(st.size));
      return cached;
    }
    // Stat first, read second: a write in between leaves the newer text under the older stamp, read again next time.
    const read = await this.read(id, file, Number(st.size));
    if (!read) {
      this.drop(id);
      return undefined;
    }
    this.entries.set(id, { stamp, summary: read.summary });
    this.tenants.set(id, listedTenant(read.summary));
    if (Number(st.size) <= KEEP_RECORD_BYTES) this.keep(id, Number(st.size), read.record);
    else this.unkeep(id);
    return read;
  }

  /** Reads and checks the file once READING_BYTES leaves room for `size` more; undefined for none or a slot. */
  private async read(id: string, file: string, size: number): Promise<Read | undefined> {
    while (this.readingBytes > 0 && this.readingBytes + size > READING_BYTES) {
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    }
    this.readingBytes += size;
    try {
      const text = await fsp.readFile(file, "utf8").catch((err) => this.missing(id, file, err));
      // A slot (./session-slot.ts), or a session made in one that a crash cut short: never acknowledged.
      if (text === undefined || isSlotText(text)) return undefined;
      // Frozen: every caller gets this one object, so a caller changing it in place would change it for all.
      const record = deepFreeze(parseRecord(file, text, id));
      return { record, summary: deepFreeze(summaryOf(record)) };
    } finally {
      this.readingBytes -= size;
      for (const wake of this.waiting.splice(0)) wake();
    }
  }

  /** Marks the record as read just now, storing it when given; drops the least recently used past KEPT_BYTES. */
  private keep(id: string, size: number, record?: SessionRecord): void {
    const entry = this.entries.get(id);
    if (!entry) return;
    if (record) entry.record = record;
    this.unkeep(id, false);
    this.kept.set(id, size);
    this.keptBytes += size;
    for (const oldest of this.kept.keys()) {
      if (this.keptBytes <= KEPT_BYTES) break;
      this.unkeep(oldest);
    }
  }

  /** Stops keeping the record whole (`drop`: and removes it from its entry). */
  private unkeep(id: string, drop = true): void {
    const bytes = this.kept.get(id);
    if (bytes === undefined) return;
    this.kept.delete(id);
    this.keptBytes -= bytes;
    if (drop) {
      const entry = this.entries.get(id);
      if (entry) delete entry.record;
    }
  }

  private missing(id: string, file: string, err: NodeJS.ErrnoException): undefined {
    if (err.code !== "ENOENT") throw diskError("read", file, err);
    this.drop(id);
    return undefined;
  }
}
