// Retention of a log's oldest segments: sealed segments past an age (or beyond a size budget) are archived —
// gzip'd into the session's `archive/` directory, out of the log — or dropped. Only a prefix of the log goes
// (its kept range stays contiguous), never the segment being written, and never while the log is open: the
// log's lock is taken as for compaction. What remains reads, opens and replays as before, because each segment's
// header carries the seq before it and the requests and turns open then; a cursor before the first kept seq
// reads on from there, and the log tells its readers where that is (firstSeq).
import { createReadStream, createWriteStream } from "node:fs";
import fsp from "node:fs/promises";
import nodePath from "node:path";
import { pipeline } from "node:stream/promises";
import { createGzip } from "node:zlib";
import type { RetireResult, SegmentPolicy } from "../../core/retention.js";
import { failure, StoreError } from "./errors.js";
import { type LogIO, nodeLogIO } from "./log-io.js";
import { acquireLogLock, type LogHolder } from "./log-lock.js";
import { type Replay, repairActive } from "./log-open.js";
import { firstSeqOf, listSealed } from "./segments.js";

export type { RetireResult, SegmentPolicy };

export const archiveDir = (logPath: string) => nodePath.join(nodePath.dirname(logPath), "archive");

/**
 * Applies `policy` to the log at `path`. Throws LogLockedError when the log is open anywhere. `replay` (the store's
 * journals, OpenOptions.replay) runs once the lock is held, as an open's does.
 */
export async function retireSegments(
  path: string,
  session: string,
  policy: SegmentPolicy,
  options: { io?: LogIO; holder?: LogHolder; now?: number; replay?: Replay } = {},
): Promise<RetireResult> {
  const io = options.io ?? nodeLogIO;
  const now = options.now ?? Date.now();
  const lock = await acquireLogLock(path, { session, ...(options.holder ? { holder: options.holder } : {}) });
  try {
    await options.replay?.(path);
    // The active segment's header carries the base once the sealed ones are gone: a crash mid-roll can leave it
    // without one, and dropping them then would start the log again at seq 1.
    await io.close((await repairActive(io, path, session, false)).fd);
    const sealed = await listSealed(path);
    const stats = await Promise.all(sealed.map((s) => fsp.stat(s.path)));
    const active = await fsp.stat(path).then(
      (st) => st.size,
      () => 0,
    );
    let total = active + stats.reduce((n, st) => n + st.size, 0);
    const result: RetireResult = { archived: 0, dropped: 0, bytesFreed: 0, firstSeq: 0 };
    let kept = 0;
    for (const [i, segment] of sealed.entries()) {
      const st = stats[i]!;
      const age = now - st.mtimeMs;
      const over = policy.maxBytes !== undefined && total > policy.maxBytes;
      const drop = policy.dropAfterMs !== undefined && age >= policy.dropAfterMs;
      const archive = !drop && policy.archiveAfterMs !== undefined && (age >= policy.archiveAfterMs || over);
      if (!drop && !archive && !over) break;
      if (archive) {
        await archiveFile(io, segment.path, st.mtime);
        result.archived++;
      } else {
        await fsp.rm(segment.path);
        result.dropped++;
      }
      total -= st.size;
      result.bytesFreed += st.size;
      kept = i + 1;
    }
    if (kept > 0) await io.syncDir(nodePath.dirname(path));
    if (policy.dropAfterMs !== undefined) await dropOldArchives(path, now - policy.dropAfterMs);
    result.firstSeq = sealed[kept]?.first ?? (await firstSeqOf(path, io));
    return result;
  } catch (err) {
    throw err instanceof StoreError ? err : failure(path, "retention failed", err);
  } finally {
    await lock.release();
  }
}

/** gzip'd beside the log, durable, with the segment's own mtime (its age), before the segment is removed. */
async function archiveFile(io: LogIO, segment: string, mtime: Date): Promise<void> {
  const dir = archiveDir(segment);
  await fsp.mkdir(dir, { recursive: true, mode: 0o700 });
  const target = nodePath.join(dir, `${nodePath.basename(segment)}.gz`);
  const tmp = `${target}.tmp`;
  await pipeline(createReadStream(segment), createGzip(), createWriteStream(tmp, { mode: 0o600 }));
  const handle = await fsp.open(tmp, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
  await fsp.utimes(tmp, mtime, mtime);
  await fsp.rename(tmp, target);
  await io.syncDir(dir);
  await fsp.rm(segment);
}

async function dropOldArchives(path: string, before: number): Promise<void> {
  const dir = archiveDir(path);
  const names = await fsp.readdir(dir).catch(() => [] as string[]);
  for (const name of names) {
    if (!name.endsWith(".jsonl.gz")) continue;
    const file = nodePath.join(dir, name);
    const st = await fsp.stat(file).catch(() => undefined);
    if (st && st.mtimeMs <= before) await fsp.rm(file, { force: true });
  }
}
