// Walking events.jsonl: forward from a known line start (open scans only what its state file does not cover),
// the torn tail a crash mid-write leaves, corruption anywhere else (a real error: silently dropping durable
// events would lose history), and finding the line that holds a seq by bisecting the file on its anchor lines,
// so a read after a cursor touches a few pages and what it returns, however long the log.
import type { SessionEvent } from "../../protocol/events.js";
import { damagedLogWording, StoreError, withReadable } from "./errors.js";
import { ANCHOR_BYTES, anchorSeq, type DeltaContext, LineDecoder, type SegmentBase } from "./log-format.js";
import { type LogIO, readFully } from "./log-io.js";
import { hashOf, LogState, loadState } from "./log-state.js";

const CHUNK = 1 << 20;
const PROBE = 16 * 1024;
const NL = 0x0a;

/**
 * Where a problem is: a line number when the walk began at the file's start, a byte offset otherwise. A damaged
 * line is never skipped (the events it held would be lost without a word): the message says what to do instead.
 */
export function corrupt(
  path: string,
  session: string,
  where: string,
  reason: string,
  readable: SessionEvent[] = [],
): StoreError {
  // What a read got before the damage goes with the error, for a reader that needs no more (readBeforeDamage).
  const advice = damagedLogWording(
    session,
    " (not the torn last line a crash leaves, which opening the log cuts)",
    "Mend that line if you know what it held",
  );
  return withReadable(
    new StoreError("brain_error", `event log ${path}: ${where}: ${reason}. ${advice}`, { session }),
    readable,
  );
}

/**
 * Calls `fn` with each complete line in [from, to) (its text and byte range); `fn` returning false stops.
 * Resolves with the offset just past the last complete line seen.
 */
export async function forEachLine(
  io: LogIO,
  fd: number,
  from: number,
  to: number,
  fn: (text: string, start: number, end: number) => boolean | undefined,
  chunk = CHUNK,
): Promise<number> {
  let carry: Buffer = Buffer.alloc(0);
  let carryAt = from;
  let pos = from;
  while (pos < to) {
    const read = await readFully(io, fd, pos, Math.min(chunk, to - pos));
    if (read.length === 0) break;
    pos += read.length;
    const buf = carry.length > 0 ? Buffer.concat([carry, read]) : read;
    let start = 0;
    for (let nl = buf.indexOf(NL, start); nl >= 0; nl = buf.indexOf(NL, start)) {
      if (fn(buf.toString("utf8", start, nl), carryAt + start, carryAt + nl + 1) === false)
        return carryAt + nl + 1;
      start = nl + 1;
    }
    carry = buf.subarray(start);
    carryAt += start;
    chunk = Math.max(chunk, carry.length * 2); // a line longer than the chunk: read more at once
  }
  return carryAt;
}

export interface ScanResult {
  /** Byte length of the valid prefix: everything after it is a torn tail. */
  end: number;
  lastSeq: number;
  anchor: { seq: number; offset: number };
  sinceAnchor: number;
  context: DeltaContext | undefined;
  /** The last seq of the line ending exactly at `checkAt`, if one does. */
  seqAtCheck?: number;
}

export interface ScanOptions {
  session: string;
  /** Where the walk starts: 0, or the start of an anchor line. */
  from: number;
  /** The seq the line before `from` ended with. */
  prevSeq: number;
  onEvents?: (events: SessionEvent[]) => void;
  /** A segment's header: the seq before its first event and the requests and turns open then. */
  onBase?: (base: SegmentBase) => void;
  checkAt?: number;
}

/** Walks the log from `from` to `size`, checking order. Throws on corruption before the last line. */
export async function scanLog(
  io: LogIO,
  fd: number,
  size: number,
  path: string,
  options: ScanOptions,
): Promise<ScanResult> {
  const decoder = new LineDecoder(options.session);
  const result: ScanResult = {
    end: options.from,
    lastSeq: options.prevSeq,
    anchor: { seq: options.prevSeq, offset: options.from },
    sinceAnchor: 0,
    context: undefined,
  };
  let line = 0;
  const where = (at: number) => (options.from === 0 ? `line ${line}` : `byte ${at}`);
  // A bad complete line is held back: it is a torn tail if nothing follows it, corruption otherwise.
  let bad: { where: string; reason: string } | undefined;
  const events: SessionEvent[] = [];
  const tail = await forEachLine(io, fd, options.from, size, (text, start, end) => {
    if (bad) throw corrupt(path, options.session, bad.where, bad.reason);
    line++;
    events.length = 0;
    const reason = decoder.decode(text, events);
    if (reason !== undefined) {
      bad = { where: where(start), reason };
      return;
    }
    if (events.length === 0) {
      // The file's header. A segment's says where its seqs start and what was open then.
      const base = decoder.base;
      if (base && start === 0) {
        result.lastSeq = base.seq;
        result.anchor = { seq: base.seq + 1, offset: 0 };
        options.onBase?.(base);
      }
      result.sinceAnchor += end - start;
      result.end = end;
      return;
    }
    const first = events[0]!.seq;
    if (first <= result.lastSeq)
      throw corrupt(
        path,
        options.session,
        where(start),
        `seq ${first} where one above ${result.lastSeq} was expected`,
      );
    const seq = anchorSeq(text.slice(0, 24));
    if (seq !== undefined) {
      result.anchor = { seq, offset: start };
      result.sinceAnchor = 0;
    }
    result.sinceAnchor += end - start;
    result.lastSeq = events[events.length - 1]!.seq;
    result.end = end;
    result.context = decoder.context;
    if (end === options.checkAt) result.seqAtCheck = result.lastSeq;
    options.onEvents?.(events);
  });
  if (bad && tail < size) throw corrupt(path, options.session, bad.where, bad.reason);
  return result;
}

/**
 * The start of the last anchor line whose first seq is at most `target` (0 when none is), by bisection
 * on the bytes [0, hi): each probe reads the page where it lands.
 */
export async function findAnchor(io: LogIO, fd: number, target: number, hi: number): Promise<number> {
  let lo = 0;
  while (hi - lo > PROBE) {
    const mid = lo + Math.floor((hi - lo) / 2);
    const found = await anchorFrom(io, fd, mid, hi);
    if (found === undefined || found.seq > target) hi = mid;
    else lo = found.offset;
  }
  // The last stretch: walk its lines for the last anchor at or below the target.
  let best = lo;
  await forEachLine(
    io,
    fd,
    lo,
    hi + ANCHOR_BYTES,
    (text, start) => {
      if (start >= hi) return false;
      const seq = anchorSeq(text.slice(0, 24));
      if (seq !== undefined) {
        if (seq > target) return false;
        best = start;
      }
      return undefined;
    },
    PROBE * 2,
  );
  return best;
}

/** The first anchor line starting in [from, hi). */
async function anchorFrom(
  io: LogIO,
  fd: number,
  from: number,
  hi: number,
): Promise<{ seq: number; offset: number } | undefined> {
  let found: { seq: number; offset: number } | undefined;
  let first = true;
  await forEachLine(
    io,
    fd,
    from - 1,
    hi,
    (text, start) => {
      // The first piece may be the end of a line begun before `from`: only what follows a newline is a line.
      if (first) {
        first = false;
        return undefined;
      }
      if (start >= hi) return false;
      const seq = anchorSeq(text.slice(0, 24));
      if (seq === undefined) return undefined;
      found = { seq, offset: start };
      return false;
    },
    PROBE,
  );
  return found;
}

/** What is left of a page's bytes (see PAGE_BYTES): the lines that gave it events count. */
export interface PageBudget {
  bytes: number;
}

/**
 * At most `limit` events with seq > after from the log's first `size` bytes, starting at the anchor found
 * for after + 1, ending with the line that spends `budget` (never before the first event). A bad last line (a
 * torn tail a writer will cut) ends the read; a bad line before it throws.
 */
export async function readAfter(
  io: LogIO,
  fd: number,
  size: number,
  path: string,
  session: string,
  after: number,
  limit: number,
  from?: number,
  budget: PageBudget = { bytes: Number.POSITIVE_INFINITY },
): Promise<SessionEvent[]> {
  const start = from ?? (await findAnchor(io, fd, after + 1, size));
  const decoder = new LineDecoder(session);
  const out: SessionEvent[] = [];
  const events: SessionEvent[] = [];
  let bad: { at: number; reason: string } | undefined;
  let prev = 0;
  const tail = await forEachLine(
    io,
    fd,
    start,
    size,
    (text, at, end) => {
      if (bad) throw corrupt(path, session, `byte ${bad.at}`, bad.reason, out);
      events.length = 0;
      const reason = decoder.decode(text, events);
      if (reason !== undefined) {
        bad = { at, reason };
        return undefined;
      }
      const before = out.length;
      for (const e of events) {
        if (e.seq <= prev)
          throw corrupt(
            path,
            session,
            `byte ${at}`,
            `seq ${e.seq} where one above ${prev} was expected`,
            out,
          );
        prev = e.seq;
        if (e.seq > after) out.push(e);
        if (out.length >= limit) return false;
      }
      if (out.length > before) {
        budget.bytes -= end - at;
        if (budget.bytes <= 0) return false;
      }
      return undefined;
    },
    after === 0 ? CHUNK : PROBE * 4,
  );
  if (bad && tail < size && out.length < limit)
    throw corrupt(path, session, `byte ${bad.at}`, bad.reason, out);
  return out;
}

/**
 * The log's tail state: from the saved state when its bytes check out (then only what follows its last anchor
 * is read), from the whole log otherwise.
 */
export async function recover(
  io: LogIO,
  fd: number,
  size: number,
  path: string,
  session: string,
): Promise<{ scan: ScanResult; state: LogState; savedEnd: number; burned?: number }> {
  const saved = await loadState(path);
  if (saved && saved.end <= size && saved.anchor.offset <= saved.end) {
    const region = await readFully(io, fd, saved.anchor.offset, saved.end - saved.anchor.offset);
    if (hashOf(region) === saved.hash) {
      const state = LogState.from(saved);
      try {
        const scan = await scanLog(io, fd, size, path, {
          session,
          from: saved.anchor.offset,
          prevSeq: saved.anchor.seq - 1,
          onEvents: (events) => state.observe(events),
          checkAt: saved.end,
        });
        if (scan.seqAtCheck === saved.seq) {
          return { scan, state, savedEnd: saved.end, ...(saved.burned ? { burned: saved.burned } : {}) };
        }
      } catch {
        // The whole scan below says what is wrong, with line numbers.
      }
    }
  }
  const state = new LogState();
  const scan = await scanLog(io, fd, size, path, {
    session,
    from: 0,
    prevSeq: 0,
    onEvents: (events) => state.observe(events),
    onBase: (base) => state.seed(base),
  });
  // A state that does not check out still names seqs this log refused (one saved over a segment whose first batch
  // was refused covers no line to check): as a floor for the next seq, the worst it costs is a gap.
  return { scan, state, savedEnd: 0, ...(saved?.burned ? { burned: saved.burned } : {}) };
}
