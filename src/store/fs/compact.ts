// Retention: a closed session's log rewritten without what its messages already hold. A turn that settled
// `completed` with an assistant.message has its deltas dropped (the message carries the same text); everything
// else stays exactly as it was, with its own seq and ts, so seqs have gaps afterwards: a cursor inside a dropped
// range reads on from the next event kept, and Last-Event-ID keeps meaning "after this seq". A session with a
// request still waiting or a turn still open is refused: its answer or close-out must land in the log it knows.
import fs from "node:fs";
import fsp from "node:fs/promises";
import nodePath from "node:path";
import type { CompactResult } from "../../core/retention.js";
import type { SessionEvent } from "../../protocol/events.js";
import { failure, StoreError } from "./errors.js";
import { burnMark, header, type SegmentBase } from "./log-format.js";
import { type LogIO, nodeLogIO, writeFully } from "./log-io.js";
import { acquireLogLock, type LogHolder } from "./log-lock.js";
import { type Replay, repairActive } from "./log-open.js";
import { LogState, statePath } from "./log-state.js";
import { listSealed, readHeader, readSegments, type Segment } from "./segments.js";

export type { CompactResult };

/**
 * Which deltas a compaction drops, learnt from the whole history a segment at a time (`see`), so that the log's
 * events are never all in memory at once: a long streamed session holds millions of deltas, tens of bytes each
 * on disk and a few hundred as objects. Only turn ids are kept.
 */
class Folding {
  private readonly withMessage = new Set<string>();
  private readonly completed = new Set<string>();
  private readonly withDeltas = new Set<string>();
  private readonly dropped = new Set<string>();
  private lastSeq = 0;

  see(events: readonly SessionEvent[]): void {
    for (const e of events) {
      this.lastSeq = e.seq;
      if (!e.turn) continue;
      if (e.type === "assistant.delta") this.withDeltas.add(e.turn);
      if (e.type === "assistant.message") this.withMessage.add(e.turn);
      if (e.type === "turn.settled" && (e.data as { status?: string }).status === "completed")
        this.completed.add(e.turn);
    }
  }

  /** Whether any delta would go (else nothing is rewritten). Call after seeing every event. */
  get anything(): boolean {
    for (const turn of this.withDeltas) if (this.folds(turn)) return true;
    return false;
  }

  /** Whether `e` stays. The log's last seq is its last line's: a late delta dropped there would give it again. */
  keeps(e: SessionEvent): boolean {
    if (e.type !== "assistant.delta" || !e.turn || !this.folds(e.turn) || e.seq === this.lastSeq) return true;
    this.dropped.add(e.turn);
    return false;
  }

  /** Turns whose deltas were dropped so far. */
  get turns(): number {
    return this.dropped.size;
  }

  private folds(turn: string): boolean {
    return this.withMessage.has(turn) && this.completed.has(turn);
  }
}

/**
 * The events a compaction keeps, and how many turns it folds (pure, so tests can check it on any history). The
 * history's last event is always kept.
 */
export function foldedEvents(events: readonly SessionEvent[]): { kept: SessionEvent[]; turns: number } {
  const folding = new Folding();
  folding.see(events);
  const kept = events.filter((e) => folding.keeps(e));
  return { kept, turns: folding.turns };
}

/**
 * Compacts the log at `path` in place. Takes the log's lock: a session open anywhere is refused. `replay` (the
 * store's journals, OpenOptions.replay) runs once the lock is held, before the log is read.
 */
export async function compactLog(
  path: string,
  session: string,
  options: { io?: LogIO; holder?: LogHolder; replay?: Replay } = {},
): Promise<CompactResult> {
  const io = options.io ?? nodeLogIO;
  const lock = await acquireLogLock(path, { session, ...(options.holder ? { holder: options.holder } : {}) });
  try {
    // The lock may be a dead owner's, taken over: its acknowledged events may be in its journal only, and a
    // record replayed after the rewrite would land at its old offset in the shorter file (or past its end).
    await options.replay?.(path);
    // A crash mid-roll can leave the active file without a header: rewritten as it is, it would start at seq 1.
    const active = await repairActive(io, path, session, false);
    await io.close(active.fd);
    const files = await segmentFiles(io, path);
    const bytesBefore = files.reduce((n, f) => n + f.bytes, 0);
    // One segment's events at a time, read twice (what folds is known only once all were seen).
    const eventsOf = (file: Segment) =>
      readSegments(io, [file], session, file.first - 1, Number.POSITIVE_INFINITY);
    const state = new LogState();
    // Segments dropped by retention took their events along: the first kept one's header says what was open.
    const base = files[0]?.base;
    if (base) state.seed(base);
    const folding = new Folding();
    let eventsBefore = 0;
    for (const file of files) {
      const events = await eventsOf(file);
      state.observe(events);
      folding.see(events);
      eventsBefore += events.length;
    }
    const open = state.snapshot();
    if (open.requests.length > 0 || open.openTurns.length > 0) {
      const what =
        open.requests.length > 0
          ? `${open.requests.length} request(s) still waiting for an answer (${open.requests.map((r) => r.type).join(", ")})`
          : `turn ${open.openTurns[0]} still open`;
      throw new StoreError(
        "bad_request",
        `session ${session} cannot be compacted: it has ${what}; open it (the turn is closed out) or answer first`,
      );
    }
    const result = {
      eventsBefore,
      eventsAfter: eventsBefore,
      bytesBefore,
      bytesAfter: bytesBefore,
      turns: 0,
    };
    if (!folding.anything) return result;
    // Each segment is rewritten by itself, keeping its name and header: the others, and the order of seqs, stay.
    for (const file of files) {
      const events = await eventsOf(file);
      const own = events.filter((e) => folding.keeps(e));
      if (own.length === events.length) continue;
      result.eventsAfter -= events.length - own.length;
      const lines = [header(session, file.base)];
      for (const e of own) {
        // Whole-event lines with each event's own ts: the rewrite changes nothing a reader sees but the gaps.
        const turn = e.turn === undefined ? "" : `"turn":${JSON.stringify(e.turn)},`;
        lines.push(
          `{"seq":${e.seq},"ts":${JSON.stringify(e.ts)},${turn}"type":"${e.type}","data":${JSON.stringify(e.data)}}\n`,
        );
      }
      // The burn mark of a refused batch stays past the last line: its seqs are never given again.
      if (file.path === path && active.marked) lines.push(burnMark(active.burned ?? 0));
      const buf = Buffer.from(lines.join(""), "utf8");
      await replaceFile(io, file.path, buf, file.path === path);
      result.bytesAfter += buf.length - file.bytes;
    }
    result.turns = folding.turns;
    return result;
  } finally {
    await lock.release();
  }
}

/** A segment of the log at `path`: its range's first seq, its header's base, its size. */
async function segmentFiles(
  io: LogIO,
  path: string,
): Promise<{ path: string; first: number; base: SegmentBase | undefined; bytes: number }[]> {
  const out = [];
  for (const seg of [...(await listSealed(path)), { first: -1, path }]) {
    let fd: number;
    try {
      fd = await io.open(seg.path, fs.constants.O_RDONLY);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT" && seg.path === path) continue;
      throw failure(seg.path, "cannot open", err);
    }
    try {
      const bytes = await io.size(fd);
      const base = (await readHeader(io, fd, bytes))?.base;
      out.push({ path: seg.path, first: seg.first < 0 ? (base?.seq ?? 0) + 1 : seg.first, base, bytes });
    } finally {
      await io.close(fd);
    }
  }
  return out;
}

async function replaceFile(io: LogIO, path: string, buf: Buffer, active: boolean): Promise<void> {
  const tmp = `${path}.compact.tmp`;
  // The rewrite keeps the file's mtime: it says when the session was last active (the session list's updated_at)
  // and how old a sealed segment is (retention), neither of which a compaction changes.
  const { atime, mtime } = await fsp.stat(path);
  const fd = await io.open(tmp, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_TRUNC, 0o600);
  try {
    await writeFully(io, fd, buf, 0);
    await io.datasync(fd);
  } finally {
    await io.close(fd);
  }
  await fsp.utimes(tmp, atime, mtime);
  // The saved state described the old bytes: drop it first, so no crash leaves it beside the new file.
  if (active) await fsp.rm(statePath(path), { force: true });
  await fsp.rename(tmp, path);
  await io.syncDir(nodePath.dirname(path));
}
