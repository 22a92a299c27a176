// Reading a log that is not open here (the CLI, the daemon for a session it has not opened): no lock needed.
// A segmented log is read segment by segment, from the one holding the cursor on.

import fs from "node:fs";
import nodePath from "node:path";
import type { SessionEvent } from "../../protocol/events.js";
import { failure, StoreError } from "./errors.js";
import { recover, scanLog } from "./jsonl-scan.js";
import type { SegmentBase } from "./log-format.js";
import { type LogIO, nodeLogIO } from "./log-io.js";
import { listSealed, type ReadSource, readHeader, readSegments } from "./segments.js";
import { statOf } from "./stored-bytes.js";

/** What a read of a log open here needs of it: its durable range, its segments, its writer's last anchor. */
export interface LiveLog {
  path: string;
  session: string;
  durableSeq: number;
  /** The active segment's durable length, and the seq before its range. */
  size: number;
  base: number;
  sealed: readonly ReadSource[];
  anchor: { seq: number; offset: number };
}

/**
 * The read of `log`'s events after `after` (at most `limit`), to run with its active file's descriptor; undefined
 * when there is nothing to read. A bad range is refused here.
 */
export function readLive(
  io: LogIO,
  log: LiveLog,
  after: number,
  limit: number,
): ((fd: number) => Promise<SessionEvent[]>) | undefined {
  if (!Number.isInteger(after) || after < 0 || !(limit >= 0)) {
    throw new StoreError(
      "bad_request",
      `event log ${log.path}: bad read range after=${after} limit=${limit}`,
    );
  }
  if (after >= log.durableSeq || limit < 1) return undefined;
  const { size, path, anchor } = log;
  const first = log.base + 1;
  // Reads near the tail (watchers catching up) start at the writer's last anchor, without a search.
  const near = after + 1 >= anchor.seq ? { from: anchor.offset } : {};
  const sealed: ReadSource[] = after + 1 <= log.base ? [...log.sealed] : [];
  const sources = (fd: number) => [...sealed, { first, path, open: { fd, size, ...near } }];
  return (fd) => readSegments(io, sources(fd), log.session, after, Math.floor(limit));
}

/**
 * Events of a log that is not open here (the CLI reading a session), with seq > after (at most `limit`). A torn
 * last line is skipped. The session id is the log's directory name unless given.
 */
export async function readEventsFile(
  path: string,
  io: LogIO = nodeLogIO,
  range: { after?: number; limit?: number; session?: string } = {},
): Promise<SessionEvent[]> {
  // The segment being written is opened before the sealed ones are listed: one sealed meanwhile is then listed
  // too (its events are read once, by seq), and what the reader gets is the log as it was at some instant.
  let fd: number | undefined;
  try {
    fd = await io.open(path, fs.constants.O_RDONLY);
  } catch (err) {
    // No events.jsonl: a crash between sealing a segment and starting the next, or a session without a log.
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw failure(path, "cannot open", err);
  }
  const session = range.session ?? nodePath.basename(nodePath.dirname(path));
  try {
    const sealed = await listSealed(path);
    if (fd === undefined && sealed.length === 0) throw failure(path, "cannot open", enoent(path));
    const size = fd === undefined ? 0 : await io.size(fd);
    const after = range.after ?? 0;
    const head = fd === undefined ? undefined : await readHeader(io, fd, size);
    const own = range.session ?? (head ?? (await sealedHeader(io, sealed)))?.session ?? session;
    if (after === 0 && range.limit === undefined && sealed.length === 0 && fd !== undefined) {
      // The whole log of one file: walked from the start, so corruption is reported by line number.
      const events: SessionEvent[] = [];
      const onEvents = (batch: SessionEvent[]) => {
        for (const e of batch) events.push(e);
      };
      await scanLog(io, fd, size, path, { session: own, from: 0, prevSeq: 0, onEvents });
      return events;
    }
    const sources: ReadSource[] = [...sealed];
    // Without a header (a segment just rolled to, or torn by a crash right after sealing) it holds no events,
    // and follows the sealed ones: never the one a read starts in (the last sealed one may hold the cursor).
    const first =
      head === undefined && sealed.length > 0
        ? Number.MAX_SAFE_INTEGER
        : Math.max((head?.base?.seq ?? 0) + 1, sealed.at(-1)?.first ?? 0);
    if (fd !== undefined) sources.push({ first, path, open: { fd, size } });
    return await readSegments(io, sources, own, after, range.limit ?? Number.POSITIVE_INFINITY);
  } finally {
    if (fd !== undefined) await io.close(fd);
  }
}

/**
 * Where a log that is not open here ends: its last seq, and the requests and turns open there (what an open of it
 * would find). Read from its last segment only: the one being written, or the last sealed one when that holds
 * nothing yet (a crash between sealing and starting the next). What was open when a segment began is in its
 * header. Seq 0 and nothing open for a log without events.
 */
export async function tailOfFile(
  path: string,
  io: LogIO = nodeLogIO,
  session = nodePath.basename(nodePath.dirname(path)),
): Promise<SegmentBase> {
  // The segment being written first, as readEventsFile does: one sealed meanwhile still has the events it had.
  const active = await segmentTail(io, path, session, 0);
  if (active?.seq) return active;
  const last = (await listSealed(path)).at(-1);
  if (!last) {
    if (active === undefined) throw failure(path, "cannot open", enoent(path));
    return active;
  }
  const sealed = await segmentTail(io, last.path, session, last.first - 1);
  return sealed ?? { seq: last.first - 1, requests: [], openTurns: [] };
}

/** The last seq of a log that is not open here, from its last segment only (see tailOfFile). */
export async function lastSeqOfFile(path: string, io: LogIO = nodeLogIO, session?: string): Promise<number> {
  return (await tailOfFile(path, io, session)).seq;
}

/** Where a segment's lines end (its header's base when it holds no event); undefined if it is missing. */
async function segmentTail(
  io: LogIO,
  path: string,
  session: string,
  prevSeq: number,
): Promise<SegmentBase | undefined> {
  let fd: number;
  try {
    fd = await io.open(path, fs.constants.O_RDONLY);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw failure(path, "cannot open", err);
  }
  try {
    // From the saved state's anchor when it checks out (as an open does: the log's last few KB), else whole,
    // seeded by the segment's header.
    const { scan, state } = await recover(io, fd, await io.size(fd), path, session);
    return { seq: Math.max(scan.lastSeq, prevSeq), ...state.snapshot() };
  } finally {
    await io.close(fd);
  }
}

async function sealedHeader(io: LogIO, sealed: readonly ReadSource[]) {
  const last = sealed.at(-1);
  if (!last) return undefined;
  const fd = await io.open(last.path, fs.constants.O_RDONLY).catch(() => undefined);
  if (fd === undefined) return undefined;
  try {
    return await readHeader(io, fd, await io.size(fd));
  } finally {
    await io.close(fd);
  }
}

function enoent(path: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`ENOENT: no such file or directory, open '${path}'`), { code: "ENOENT" });
}

/**
 * When the log at `path` was last written (its active file's mtime: every batch written, or segment begun, sets
 * it; compaction keeps it), and whether anything ever was: a log's header goes with its first event, so an empty
 * file is one nothing was written to, unless a crash between sealing a segment and starting the next left it so.
 * One stat; the segments are looked for only then.
 */
export async function lookAtLog(path: string): Promise<{ updatedAt?: string; unwritten: boolean }> {
  const st = await statOf(path);
  const unwritten = (st?.size ?? 0) === 0 && (await listSealed(path)).length === 0;
  return { ...(st ? { updatedAt: st.mtime.toISOString() } : {}), unwritten };
}
