// The lines of events.jsonl. Three shapes, told apart by their first bytes, so files written before this format
// (every line a whole event) still read, and keep growing in the new shapes:
//
//   {"brain_log":2,"session":"S"}                         the first line of a file in this format
//   {"brain_log":2,"session":"S","seq":N,"requests":[…],"open_turns":[…]}
//                                                         the first line of a segment rolled at seq N: what
//                                                         reopening needs from the segments before it
//   {"seq":N,"ts":"…","turn":"T","type":"X","data":{…}}   one event (older files also carry "session")
//   {"seq":N,"ts":"…","turn":"T","d":["a","b",…]}           assistant.delta events N, N+1, … of one turn
//   [N,dt,"a","b",…]                                        more deltas of the turn of the line before,
//                                                           stamped dt ms after that line
//
// The session is the file's (never repeated), a commit's events share one timestamp, and a stream of deltas
// costs its text plus a few bytes per commit instead of ~180 bytes of envelope per delta. A line starting `{` is
// an anchor: it reads without the lines before it. Continuations are never written more than ANCHOR_BYTES past
// an anchor, so a reader that seeks to any byte finds an anchor within that distance.
import type { SessionEvent } from "../../protocol/events.js";
import { IsoTime } from "./iso-time.js";

export const ANCHOR_BYTES = 4096;

/** What a segment starts from: the last seq before it, and the requests and turns open at that point. */
export interface SegmentBase {
  seq: number;
  requests: SessionEvent[];
  openTurns: string[];
}

export function header(session: string, base?: SegmentBase): string {
  const head = `{"brain_log":2,"session":${JSON.stringify(session)}`;
  if (!base || base.seq === 0) return `${head}}\n`;
  // The requests keep their own session field: a header is read before the decoder knows any other.
  return `${head},"seq":${base.seq},"requests":${JSON.stringify(base.requests)},"open_turns":${JSON.stringify(base.openTurns)}}\n`;
}

/** What a continuation line needs from the lines before it. */
export interface DeltaContext {
  turn: string | undefined;
  ms: number;
}

/** Where the writer stands: what the next continuation would follow, and the last anchor. */
export interface WriterState {
  context: DeltaContext | undefined;
  /** Bytes written since the last anchor line started. */
  sinceAnchor: number;
  anchor: { seq: number; offset: number };
}

/** Decodes lines in file order; a continuation needs the lines before it from its anchor on. */
export class LineDecoder {
  context: DeltaContext | undefined;
  /** The header's base, when the file is a segment rolled after seq 0. */
  base: SegmentBase | undefined;
  private readonly time = new IsoTime();

  constructor(public session: string) {}

  /** The line's events appended to `out`, or why the line is not one of ours. */
  decode(text: string, out: SessionEvent[]): string | undefined {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (err) {
      return `not valid JSON (${(err as Error).message})`;
    }
    if (Array.isArray(value)) return this.continuation(value, out);
    if (value === null || typeof value !== "object") return "not a JSON object";
    const v = value as Record<string, unknown>;
    if (v.brain_log !== undefined) {
      // Another format is refused by its number: a newer node's log (a rolling upgrade) is not guessed at.
      if (v.brain_log !== 2) {
        return `a header of log format ${JSON.stringify(v.brain_log)}, which this version of Brain cannot read (it reads format 2): written by a newer version? upgrade this node`;
      }
      if (typeof v.session !== "string") return "a header without its session";
      this.session = v.session;
      if (v.seq !== undefined) {
        if (!isSeq(v.seq) || !Array.isArray(v.requests) || !Array.isArray(v.open_turns))
          return "a segment header without seq, requests and open_turns";
        this.base = {
          seq: v.seq,
          requests: v.requests as SessionEvent[],
          openTurns: v.open_turns as string[],
        };
      }
      return undefined;
    }
    if (!isSeq(v.seq) || typeof v.ts !== "string") return "not an event (no seq or ts)";
    const turn = v.turn;
    if (turn !== undefined && typeof turn !== "string") return "turn is not a string";
    if (Array.isArray(v.d)) {
      const ms = Date.parse(v.ts);
      if (Number.isNaN(ms)) return "a delta line without a valid ts";
      this.context = { turn, ms };
      return this.deltas(v.seq, v.ts, turn, v.d, out);
    }
    if (typeof v.type !== "string") return "not an event (no seq or type)";
    this.context = undefined;
    // A line of an older file names its session: lines written after it in this format are of the same one.
    if (typeof v.session === "string") this.session = v.session;
    const event = { seq: v.seq, ts: v.ts, session: this.session };
    out.push(
      (turn === undefined
        ? { ...event, type: v.type, data: v.data }
        : { ...event, turn, type: v.type, data: v.data }) as SessionEvent,
    );
    return undefined;
  }

  private continuation(v: unknown[], out: SessionEvent[]): string | undefined {
    const [seq, dt] = v;
    if (!isSeq(seq) || !Number.isInteger(dt)) return "a continuation line without seq and dt";
    if (!this.context) return "a continuation line with no delta line before it";
    const ms = this.context.ms + (dt as number);
    this.context = { turn: this.context.turn, ms };
    return this.deltas(seq, this.time.of(ms), this.context.turn, v.slice(2), out);
  }

  private deltas(
    seq: number,
    ts: string,
    turn: string | undefined,
    texts: unknown[],
    out: SessionEvent[],
  ): string | undefined {
    if (texts.length === 0) return "a delta line with no deltas";
    for (const [i, text] of texts.entries()) {
      if (typeof text !== "string") return "a delta that is not a string";
      const e = { seq: seq + i, ts, session: this.session } as SessionEvent;
      if (turn !== undefined) e.turn = turn;
      (e as { type: string }).type = "assistant.delta";
      (e as { data: unknown }).data = { text };
      out.push(e);
    }
    return undefined;
  }
}

const isSeq = (v: unknown): v is number => typeof v === "number" && Number.isInteger(v) && v > 0;

const ANCHOR_SEQ = /^\{"seq":(\d+)/;

/**
 * What a refused batch leaves past the log's last line, a line never ended (every reader skips it, as a torn
 * tail): the batch's last seq, so that the next open gives none of its seqs again whatever became of the saved
 * state. No event line is ever this text, nor one cut short.
 */
export const burnMark = (seq: number) => `{"seq":${seq}}`;
export const BURN_MARK_MAX = burnMark(Number.MAX_SAFE_INTEGER).length;
const BURN_MARK = /^\{"seq":(\d+)\}$/;

/** The seq a burn mark names, or undefined for any other text. */
export function burnMarkSeq(text: string): number | undefined {
  const m = BURN_MARK.exec(text);
  return m ? Number(m[1]) : undefined;
}

/** The first seq of an anchor line, from its first bytes alone; undefined for any other line. */
export function anchorSeq(head: string): number | undefined {
  const m = ANCHOR_SEQ.exec(head);
  return m ? Number(m[1]) : undefined;
}

/**
 * Every event in a log's text, for tools and tests that read a file whole and synchronously; `bad` lists the
 * lines that did not decode (a torn tail among them). Readers of a live log use readEventsFile.
 */
export function decodeLogText(text: string, session = ""): { events: SessionEvent[]; bad: string[] } {
  const decoder = new LineDecoder(session);
  const events: SessionEvent[] = [];
  const bad: string[] = [];
  for (const [i, line] of text.split("\n").entries()) {
    if (!line) continue;
    const reason = decoder.decode(line, events);
    if (reason !== undefined) bad.push(`line ${i + 1}: ${reason}`);
  }
  return { events, bad };
}
