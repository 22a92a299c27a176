// A session's log in segments: `events.jsonl` is the segment being written; once it has grown past a size it is
// sealed (renamed `events.<first seq of its range, 16 digits>.jsonl`) and a new `events.jsonl` starts with a
// header naming the seq before it and the requests and turns open at that point. So every segment reads by
// itself, an open reads only the last one, and retention can archive or drop the oldest without touching the
// rest. A log written before segments existed is simply a log of one segment, and is rolled like any other.
import fs from "node:fs";
import fsp from "node:fs/promises";
import nodePath from "node:path";
import { PAGE_BYTES } from "../../core/event-log.js";
import type { SessionEvent } from "../../protocol/events.js";
import { failure, StoreError } from "./errors.js";
import { forEachLine, readAfter, scanLog } from "./jsonl-scan.js";
import { header, LineDecoder, type SegmentBase } from "./log-format.js";
import { type LogIO, writeFlags, writeFully } from "./log-io.js";
import { LogState } from "./log-state.js";

export interface Segment {
  /** The first seq of its range (its events may start later, after a compaction). */
  first: number;
  path: string;
}

/** `events` for `.../events.jsonl`: segments are named after the log they belong to. */
const stem = (active: string) => nodePath.basename(active).replace(/\.jsonl$/, "");

export const sealedPath = (active: string, first: number) =>
  nodePath.join(nodePath.dirname(active), `${stem(active)}.${String(first).padStart(16, "0")}.jsonl`);

/** The sealed segments beside the log at `active`, oldest first. */
export async function listSealed(active: string): Promise<Segment[]> {
  let names: string[];
  try {
    names = await fsp.readdir(nodePath.dirname(active));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw failure(active, "cannot list its segments", err);
  }
  const out: Segment[] = [];
  const prefix = `${stem(active)}.`;
  for (const name of names) {
    if (!name.startsWith(prefix)) continue;
    const m = /^(\d{16})\.jsonl$/.exec(name.slice(prefix.length));
    if (m) out.push({ first: Number(m[1]), path: nodePath.join(nodePath.dirname(active), name) });
  }
  return out.sort((a, b) => a.first - b.first);
}

/**
 * Seals the segment at `active` (its range starts at `first`) and creates the next one, empty: two calls, no
 * write and no sync. Its header goes in with the first batch written to it, and the directory sync that makes
 * both names durable runs beside that write, before any event of the new segment counts as durable (see
 * JsonlEventLog). Each step leaves a log that opens: with no `events.jsonl`, or one empty or holding a torn
 * header, the open rebuilds the header from the last sealed segment. `stale`: an `events.jsonl` was there
 * already (none of this log's: it holds the lock), with bytes that must be cut before the first write.
 */
export async function seal(
  io: LogIO,
  active: string,
  first: number,
): Promise<{ fd: number; stale: boolean; sealed: Segment }> {
  const sealed = { first, path: sealedPath(active, first) };
  // rename replaces silently: a segment already sealed under this name (a base gone wrong) must not be lost.
  if (
    await fsp.stat(sealed.path).then(
      () => true,
      () => false,
    )
  ) {
    throw new StoreError("brain_error", `${active}: cannot seal the segment: ${sealed.path} exists already`);
  }
  try {
    await fsp.rename(active, sealed.path);
  } catch (err) {
    throw failure(active, "cannot seal the segment", err);
  }
  const { O_RDWR, O_CREAT, O_EXCL } = fs.constants;
  try {
    try {
      return {
        fd: await io.open(active, writeFlags(io, O_RDWR | O_CREAT | O_EXCL), 0o600),
        stale: false,
        sealed,
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
    return { fd: await io.open(active, writeFlags(io, O_RDWR), 0o600), stale: true, sealed };
  } catch (err) {
    // Nothing was created: put the segment back so this log keeps writing where it was (if even that fails, the
    // next open starts `events.jsonl` from the sealed segment, whatever it holds by then).
    await fsp.rename(sealed.path, active).catch(() => {});
    throw failure(active, "cannot start a segment", err);
  }
}

/** Creates `active` with a segment header, durable (file and directory entry) before any event follows it. */
export async function startSegment(
  io: LogIO,
  active: string,
  session: string,
  base: SegmentBase,
): Promise<{ fd: number; size: number }> {
  let fd: number;
  try {
    fd = await io.open(active, writeFlags(io, fs.constants.O_RDWR | fs.constants.O_CREAT), 0o600);
  } catch (err) {
    throw failure(active, "cannot start a segment", err);
  }
  try {
    const buf = Buffer.from(header(session, base), "utf8");
    await io.truncate(fd, 0);
    await writeFully(io, fd, buf, 0);
    await io.datasync(fd); // the truncate's too: O_DSYNC covers only the write
    await io.syncDir(nodePath.dirname(active));
    return { fd, size: buf.length };
  } catch (err) {
    await io.close(fd).catch(() => {});
    throw failure(active, "cannot start a segment", err);
  }
}

/**
 * Where the last sealed segment ends: its last seq and what was open then, for a new `events.jsonl` (a crash
 * came between sealing and starting it). Its torn tail, if any, is cut. Reads that one segment only.
 */
export async function baseAfter(io: LogIO, segment: Segment, session: string): Promise<SegmentBase> {
  let fd: number;
  try {
    fd = await io.open(segment.path, fs.constants.O_RDWR);
  } catch (err) {
    throw failure(segment.path, "cannot open", err);
  }
  try {
    const size = await io.size(fd);
    const state = new LogState();
    const scan = await scanLog(io, fd, size, segment.path, {
      session,
      from: 0,
      prevSeq: segment.first - 1,
      onEvents: (events) => state.observe(events),
      onBase: (base) => state.seed(base),
    });
    if (scan.end < size) {
      await io.truncate(fd, scan.end);
      await io.datasync(fd);
    }
    return { seq: Math.max(scan.lastSeq, segment.first - 1), ...state.snapshot() };
  } finally {
    await io.close(fd).catch(() => {});
  }
}

/** One segment to read: a file to open, or one already open (the live log's own). */
export interface ReadSource {
  first: number;
  path: string;
  /** An open descriptor and the bytes of it that are durable; else the file is opened, read and closed. */
  open?: { fd: number; size: number; from?: number };
}

/**
 * At most `limit` events with seq > after across `sources` (oldest first), touching only the segments that
 * hold them: the first is the last one whose range starts at or before after + 1. A sealed segment gone
 * meanwhile (dropped by retention) is skipped: reads never take the log's lock. With a finite `limit` the read
 * is a page, ending with the line that takes it past PAGE_BYTES.
 */
export async function readSegments(
  io: LogIO,
  sources: readonly ReadSource[],
  session: string,
  after: number,
  limit: number,
): Promise<SessionEvent[]> {
  let start = 0;
  for (let i = 0; i < sources.length; i++) if (sources[i]!.first <= after + 1) start = i;
  const out: SessionEvent[] = [];
  const budget = { bytes: Number.isFinite(limit) ? PAGE_BYTES : Number.POSITIVE_INFINITY };
  let cursor = after;
  for (let i = start; i < sources.length && out.length < limit && budget.bytes > 0; i++) {
    const source = sources[i]!;
    const want = limit - out.length;
    let events: SessionEvent[];
    if (source.open) {
      const { fd, size, from } = source.open;
      events = await readAfter(io, fd, size, source.path, session, cursor, want, from, budget);
    } else {
      let fd: number;
      try {
        fd = await io.open(source.path, fs.constants.O_RDONLY);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === "ENOENT") continue;
        throw failure(source.path, "cannot open", err);
      }
      try {
        events = await readAfter(
          io,
          fd,
          await io.size(fd),
          source.path,
          session,
          cursor,
          want,
          undefined,
          budget,
        );
      } finally {
        await io.close(fd).catch(() => {});
      }
    }
    for (const e of events) out.push(e);
    if (events.length > 0) cursor = events[events.length - 1]!.seq;
  }
  return out;
}

/** The file's header line, decoded (undefined when its first line is an event: a log older than headers). */
export async function readHeader(
  io: LogIO,
  fd: number,
  size: number,
): Promise<{ session: string; base: SegmentBase | undefined } | undefined> {
  let found: { session: string; base: SegmentBase | undefined } | undefined;
  await forEachLine(
    io,
    fd,
    0,
    size,
    (text) => {
      if (!text.startsWith('{"brain_log"')) return false;
      const decoder = new LineDecoder("");
      if (decoder.decode(text, []) === undefined) found = { session: decoder.session, base: decoder.base };
      return false;
    },
    4096,
  );
  return found;
}

/** The first seq the log at `active` still holds: its first sealed segment's, else its own header's base + 1. */
export async function firstSeqOf(active: string, io: LogIO): Promise<number> {
  const sealed = await listSealed(active);
  if (sealed.length > 0) return sealed[0]!.first;
  let fd: number;
  try {
    fd = await io.open(active, fs.constants.O_RDONLY);
  } catch {
    return 1;
  }
  try {
    return ((await readHeader(io, fd, await io.size(fd)))?.base?.seq ?? 0) + 1;
  } finally {
    await io.close(fd).catch(() => {});
  }
}
