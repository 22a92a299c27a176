// session.json records kept in memory by the store instance that read them, each with the stat it was read at, so
// listing thousands of sessions costs one stat per file, not a read and a schema check each.
//
// Why stat and not "our own writes keep it fresh": the embedded store is shared. A `brain run`, the CLI or a
// second daemon on the same $BRAIN_HOME each has its own FsSessionStore and writes session.json directly; a cache
// fed only by this instance's writes would serve their changes stale forever. Every write of session.json is
// tmp + rename (a new inode, new ctime and mtime), so a record is served from memory only while the file's inode,
// size, mtime and ctime (nanoseconds) are still those it was read at; anything else reads and checks it again.
// This instance's own writes drop their entry rather than store the new record: a stat taken after our rename
// could already be another process's newer file, and caching our record under its stat would pin a stale one.
import type { BigIntStats } from "node:fs";
import fsp from "node:fs/promises";
import { diskError } from "./errors.js";
import { deepFreeze, parseRecord, type SessionRecord } from "./session-record.js";
import { isSlotText } from "./session-slot.js";

interface Cached {
  stamp: string;
  record: SessionRecord;
}

const stampOf = (st: BigIntStats) => `${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;

export class RecordCache {
  private readonly records = new Map<string, Cached>();

  /** The record in `file`, from memory while the file is unchanged; undefined when missing or a slot's. */
  async get(id: string, file: string): Promise<SessionRecord | undefined> {
    const st = await fsp.stat(file, { bigint: true }).catch((err) => this.missing(id, file, err));
    if (!st) return undefined;
    const stamp = stampOf(st);
    const cached = this.records.get(id);
    if (cached?.stamp === stamp) return cached.record;
    // Stat first, read second: a write in between leaves the newer text under the older stamp, read again next time.
    const text = await fsp.readFile(file, "utf8").catch((err) => this.missing(id, file, err));
    // A slot (./session-slot.ts), or a session made in one that a crash cut short: never acknowledged.
    if (text === undefined || isSlotText(text)) {
      this.records.delete(id);
      return undefined;
    }
    // Frozen: every caller gets this one object, so a caller changing it in place would change it for all.
    const record = deepFreeze(parseRecord(file, text, id));
    this.records.set(id, { stamp, record });
    return record;
  }

  /** Drops a session's entry: this store wrote or removed its file. */
  forget(id: string): void {
    this.records.delete(id);
  }

  /** Drops the entries of sessions no longer on disk (removed by another process), given those that are. */
  keepOnly(ids: ReadonlySet<string>): void {
    for (const id of this.records.keys()) if (!ids.has(id)) this.records.delete(id);
  }

  private missing(id: string, file: string, err: NodeJS.ErrnoException): undefined {
    if (err.code !== "ENOENT") throw diskError("read", file, err);
    this.records.delete(id);
    return undefined;
  }
}
