// One group commit's worth of appends, and its lines. Events wait for their fdatasync as parallel arrays (the
// caller's event objects, each one's body, its kind; per append() call its count and promise functions): an
// event queued costs no object of the log's own. A runner's delta (its text verbatim in its frame, or still the
// bytes of its stdout chunk: see RunnerFrameReader) keeps not even the caller's objects: its text is copied at
// once into the batch's bytes (off the JS heap), so the thousands of
// deltas that wait through one fdatasync leave the GC nothing to copy or promote (their strings would keep each
// frame's whole line alive); its string is made again once durable, for the short life of the subscribers' call.
// So does an extension host's delta, whose text the run's translator gathers as bytes (TextBytes).
// Other deltas keep their string: their callers mostly hold it anyway (a whole-text accumulator), and the two
// copies cost more than they save there (measured on the extension host and appends benches). The lines are written straight into the commit's buffer (its byte
// offsets come from the writes themselves, no second pass to measure the text).
import type { NewEvent, SessionEvent } from "../../protocol/events.js";
import { heldBytes, heldMessage, verbatimText } from "../../protocol/fast-frames.js";
import { ANCHOR_BYTES, type WriterState } from "./log-format.js";

/** The body is the data's JSON: the event gets a line of its own. */
const WHOLE = 0;
/** The body is a delta's text as a JSON string, quotes included. */
const QUOTED = 1;
/** The body is a delta's text itself: no character in it needs escaping in JSON, and none is a lone surrogate. */
const RAW = 2;
/** As RAW, but the text is in the batch's bytes, not held as a string. */
const HELD = 3;
/**
 * The body is the end of a message's JSON after its text, which is in `blocks` (see heldMessage). Like WHOLE, a
 * line of its own; the kinds below it are the deltas'.
 */
const MESSAGE = 4;

/** What a JSON string cannot hold as is, and lone surrogates (UTF-8 cannot carry them; JSON escapes them). */
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

type HeldBytes = NonNullable<ReturnType<typeof heldBytes>>;

const [QUOTE, COMMA, NEWLINE, BRACE] = [0x22, 0x2c, 0x0a, 0x7d];

/** `{text}` and nothing else: the only data the delta lines can hold. */
function onlyText(data: Record<string, unknown>): boolean {
  let n = 0;
  for (const _ in data) n++;
  return n === 1;
}

export class Batch {
  /** The caller's event; undefined for a delta held in `texts` (its turn is in `turns`). */
  private readonly events: (NewEvent | undefined)[] = [];
  private readonly turns: (string | undefined)[] = [];
  private readonly bodies: string[] = [];
  private readonly kinds: number[] = [];
  /**
   * Where a held delta ends in `texts` (it starts where the one before it ended). Each is held as it is written
   * in a line, `"text",`, so a run of them is copied as one range.
   */
  private readonly ends: number[] = [];
  private readonly texts = new Bytes(0);
  /** The bytes of the texts of the MESSAGE events. */
  private messageBytes = 0;
  private readonly counts: number[] = [];
  private readonly resolves: ((events: SessionEvent[]) => void)[] = [];
  private readonly rejects: ((err: Error) => void)[] = [];
  /** One of the appends is awaited (AppendOptions): its caller can do nothing until the batch is durable. */
  awaited = false;

  get length(): number {
    return this.events.length;
  }

  /**
   * Queues one append() call's events, serialised now so a value JSON cannot hold fails its own append only
   * (then none of them is queued, and this throws). Its promise's functions follow with `settleWith`.
   */
  add(events: readonly NewEvent[]): void {
    const before = this.events.length;
    const textsBefore = this.texts.at;
    try {
      for (const e of events) this.push(e);
    } catch (err) {
      for (const a of [this.events, this.turns, this.bodies, this.kinds, this.ends]) a.length = before;
      this.texts.at = textsBefore;
      throw err;
    }
    this.counts.push(events.length);
  }

  settleWith(resolve: (events: SessionEvent[]) => void, reject: (err: Error) => void): void {
    this.resolves.push(resolve);
    this.rejects.push(reject);
  }

  /** Every append() of the batch resolves with its own events, in order. */
  resolve(durable: SessionEvent[]): void {
    let at = 0;
    for (let k = 0; k < this.counts.length; k++) {
      const n = this.counts[k]!;
      this.resolves[k]!(n === 1 ? [durable[at]!] : durable.slice(at, at + n));
      at += n;
    }
  }

  reject(err: Error): void {
    for (const reject of this.rejects) reject(err);
  }

  /** The batch's events as stored, numbered from `first`, all stamped `ts`. */
  stored(session: string, first: number, ts: string): SessionEvent[] {
    const out: SessionEvent[] = new Array(this.events.length);
    let from = 0;
    for (let i = 0; i < this.events.length; i++) {
      const e = this.events[i];
      const turn = this.turns[i];
      let type: string;
      let data: unknown;
      if (e === undefined) {
        const to = this.ends[i]!;
        type = "assistant.delta";
        data = { text: this.texts.text(from + 1, to - 2) };
        from = to;
      } else ({ type, data } = e);
      out[i] = (
        turn === undefined
          ? { seq: first + i, ts, session, type, data }
          : { seq: first + i, ts, session, turn, type, data }
      ) as SessionEvent;
    }
    return out;
  }

  /**
   * Lays out the batch's lines (after `head`, a new file's header or "") in one buffer to be written at byte
   * `offset`: adjacent deltas of one turn share a line, and continue the previous line when it holds deltas of
   * the same turn. Returns the bytes and the writer's new state; `state` is left as it was, so a failed commit
   * changes nothing.
   */
  layout(
    head: string,
    first: number,
    ts: string,
    ms: number,
    offset: number,
    state: WriterState,
  ): { bytes: Buffer; state: WriterState } {
    let { context, sinceAnchor, anchor } = state;
    const { events, turns, bodies, kinds, ends, texts } = this;
    let estimate = head.length * 3 + texts.at + this.messageBytes + 64;
    for (let i = 0; i < bodies.length; i++) estimate += bodies[i]!.length + 16;
    const out = new Bytes(estimate);
    out.write(head);
    let from = 0; // where the next held delta's text starts in `texts`
    for (let i = 0; i < events.length; ) {
      const seq = first + i;
      const start = out.at;
      const eventTurn = turns[i];
      const turn = eventTurn === undefined ? "" : `"turn":${JSON.stringify(eventTurn)},`;
      if (kinds[i] === WHOLE || kinds[i] === MESSAGE) {
        out.write(`{"seq":${seq},"ts":"${ts}",${turn}"type":"${events[i]!.type}","data":`);
        if (kinds[i] === MESSAGE) {
          out.write('{"text":"');
          for (const block of heldMessage(events[i]!.data)!.blocks) out.buffer(block);
        }
        out.write(bodies[i]!);
        out.byte(BRACE);
        out.byte(NEWLINE);
        anchor = { seq, offset: offset + start };
        sinceAnchor = out.at - start;
        context = undefined;
        i++;
        continue;
      }
      const continues = context !== undefined && context.turn === eventTurn && sinceAnchor < ANCHOR_BYTES;
      if (continues) out.write(`[${seq},${ms - context!.ms},`);
      else out.write(`{"seq":${seq},"ts":"${ts}",${turn}"d":[`);
      let j = i;
      do {
        if (j > i) out.byte(COMMA);
        if (kinds[j] === HELD) {
          let k = j;
          while (k + 1 < events.length && kinds[k + 1] === HELD && turns[k + 1] === eventTurn) k++;
          out.copy(texts, from, ends[k]! - 1); // the last one's comma is the line's to write
          from = ends[k]!;
          j = k + 1;
          continue;
        }
        if (kinds[j] === RAW) {
          out.byte(QUOTE);
          out.write(bodies[j]!);
          out.byte(QUOTE);
        } else out.write(bodies[j]!);
        j++;
      } while (j < events.length && kinds[j]! < MESSAGE && kinds[j] !== WHOLE && turns[j] === eventTurn);
      out.byte(0x5d); // ]
      if (!continues) {
        out.byte(BRACE);
        anchor = { seq, offset: offset + start };
        sinceAnchor = 0;
      }
      out.byte(NEWLINE);
      sinceAnchor += out.at - start;
      context = { turn: eventTurn, ms };
      i = j;
    }
    return { bytes: out.done(), state: { context, sinceAnchor, anchor } };
  }

  private push(e: NewEvent): void {
    if (e.type === "assistant.delta") {
      const bytes = heldBytes(e.data);
      if (bytes !== undefined) return this.hold(e.turn, bytes);
      const verbatim = verbatimText(e.data);
      if (verbatim !== undefined) return this.hold(e.turn, verbatim);
      const data = e.data as Record<string, unknown>;
      const text = data.text;
      // Only a plain {text} fits the delta lines; anything else is stored whole, as the reader must give it back.
      if (typeof text === "string" && onlyText(data)) {
        if (NEEDS_ESCAPE.test(text)) return this.queue(e, JSON.stringify(text), QUOTED);
        return this.queue(e, text, RAW);
      }
    }
    const message = e.type === "assistant.message" ? heldMessage(e.data) : undefined;
    if (message) {
      for (const block of message.blocks) this.messageBytes += block.length;
      return this.queue(e, `","stop_reason":${JSON.stringify(message.stop_reason)}}`, MESSAGE);
    }
    const body = JSON.stringify(e.data);
    if (body === undefined) throw new Error(`the data of a ${e.type} event is not JSON`);
    this.queue(e, body, WHOLE);
  }

  /**
   * A delta whose text needs no escape: its bytes now (copied from the chunk it was read from, when it is bytes),
   * its string again once durable.
   */
  private hold(turn: string | undefined, text: string | HeldBytes): void {
    this.texts.byte(QUOTE);
    if (typeof text === "string") this.texts.write(text);
    else this.texts.from(text);
    this.texts.byte(QUOTE);
    this.texts.byte(COMMA);
    this.events.push(undefined);
    this.turns.push(turn);
    this.bodies.push("");
    this.kinds.push(HELD);
    this.ends.push(this.texts.at);
  }

  private queue(e: NewEvent, body: string, kind: number): void {
    this.events.push(e);
    this.turns.push(e.turn);
    this.bodies.push(body);
    this.kinds.push(kind);
    this.ends.push(0);
  }
}

type Utf8Write = (this: Buffer, s: string, offset: number, length: number) => number;
/**
 * Buffer's own UTF-8 writer, without the argument checks of buf.write (which cost more than the copy for a
 * delta's text); buf.write where a runtime lacks it.
 */
const utf8Write: Utf8Write =
  (Buffer.prototype as unknown as { utf8Write?: Utf8Write }).utf8Write ??
  function (this: Buffer, s, offset, length) {
    return this.write(s, offset, length, "utf8");
  };

/** A growing buffer written as UTF-8; every write knows its byte count, so no text is measured twice. */
class Bytes {
  private buf: Buffer;
  at = 0;

  constructor(size: number) {
    this.buf = Buffer.allocUnsafe(size);
  }

  write(s: string): void {
    // A UTF-16 unit never takes more than 3 bytes in UTF-8.
    if (this.buf.length - this.at < s.length * 3) this.grow(s.length * 3);
    this.at += utf8Write.call(this.buf, s, this.at, this.buf.length - this.at);
  }

  /** Bytes [from, to) of `other`. */
  copy(other: Bytes, from: number, to: number): void {
    if (this.buf.length - this.at < to - from) this.grow(to - from);
    this.at += other.buf.copy(this.buf, this.at, from, to);
  }

  /** Bytes that copy themselves (a VerbatimBytes). */
  from(text: HeldBytes): void {
    if (this.buf.length - this.at < text.byteLength) this.grow(text.byteLength);
    this.at += text.copyTo(this.buf, this.at);
  }

  buffer(b: Buffer): void {
    if (this.buf.length - this.at < b.length) this.grow(b.length);
    this.at += b.copy(this.buf, this.at);
  }

  /** Bytes [from, to) as the string they encode. */
  text(from: number, to: number): string {
    return this.buf.toString("utf8", from, to);
  }

  byte(b: number): void {
    if (this.at === this.buf.length) this.grow(1);
    this.buf[this.at++] = b;
  }

  done(): Buffer {
    return this.buf.subarray(0, this.at);
  }

  private grow(need: number): void {
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.at + need + 4096));
    this.buf.copy(next, 0, 0, this.at);
    this.buf = next;
  }
}
