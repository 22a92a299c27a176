// The relay's hot path: the frames a runner sends by the thousand (assistant.delta, tool.call) decoded without
// zod, under the very same strict rules: JSON.parse (native, faster than any scanner written in JS), then the
// schema's checks by hand on the parsed object, which is kept as the frame rather than copied. Anything these
// checks do not recognise as certainly valid goes to decodeRunnerFrame (frames.ts), which stays the reference: it
// decides what is valid and words every error. fast-frames.test.ts holds the two to the same answers on
// generated valid and invalid frames.
//
// A delta whose text the runner wrote verbatim (no escapes: the common case) gets a VerbatimText as its data, so
// the event log writes that text as it came instead of serialising it again (see verbatimText).
import { isAscii } from "node:buffer";
import { decodeRunnerFrame } from "./frames.js";
import { MAX_FRAME, type RunnerToBrainFrame } from "./runner.js";

/**
 * A delta's data whose text appears in its frame exactly as JSON would write it (no character needed
 * escaping), so `{"text":"` + text + `"}` is its JSON. Frozen: the text cannot drift from that promise, and no
 * field can be added that the log line would miss. JSON.stringify and deep equality see a plain `{text}`.
 */
class VerbatimText {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
    Object.freeze(this);
  }
}

/**
 * The text of a delta's data when the fast decoder found it verbatim in the frame (so `{"text":"` + text + `"}`
 * is the data's JSON); otherwise undefined.
 */
export function verbatimText(data: unknown): string | undefined {
  return data instanceof VerbatimText ? data.text : undefined;
}

/**
 * A delta's data whose text is bytes [start, end) of a runner's stdout chunk, valid UTF-8 that JSON writes as it
 * is (no quote, backslash or control character): the log copies those bytes into its line without a string
 * ever being made of them. `text` makes the string on demand (once), and JSON.stringify sees a plain `{text}`.
 * The bytes are private fields, so a spread (`{...data}`) copies none of them.
 */
class VerbatimBytes {
  readonly #buf: Buffer;
  readonly #start: number;
  readonly #end: number;
  #text: string | undefined;
  constructor(buf: Buffer, start: number, end: number) {
    this.#buf = buf;
    this.#start = start;
    this.#end = end;
  }
  get text(): string {
    this.#text ??= this.#buf.toString("utf8", this.#start, this.#end);
    return this.#text;
  }
  toJSON(): { text: string } {
    return { text: this.text };
  }
  /** Copies the text's bytes into `target` at `at`; returns how many. */
  copyTo(target: Buffer, at: number): number {
    return this.#buf.copy(target, at, this.#start, this.#end);
  }
  get byteLength(): number {
    return this.#end - this.#start;
  }
}

/** A delta's data made of a chunk's bytes (see VerbatimBytes): `{text}` where the bytes are the text. */
export function verbatimBytes(buf: Buffer, start: number, end: number): { readonly text: string } {
  return new VerbatimBytes(buf, start, end);
}

/** The bytes behind a delta's data when it was made by verbatimBytes; otherwise undefined. */
export function heldBytes(
  data: unknown,
): { copyTo(target: Buffer, at: number): number; readonly byteLength: number } | undefined {
  return data instanceof VerbatimBytes ? data : undefined;
}

/**
 * An assistant.message's data whose text is also held as its UTF-8 blocks, each plain (no character JSON would
 * escape), so `{"text":"` + blocks + `","stop_reason":` + JSON of stop_reason + `}` is its JSON. Its fields are
 * plain own ones (JSON.stringify, a spread and deep equality see `{text, stop_reason}`); the blocks are private,
 * and the object is frozen so the two cannot drift apart.
 */
class HeldMessage {
  readonly text: string;
  readonly stop_reason: string;
  readonly #blocks: Buffer[];
  constructor(text: string, stopReason: string, blocks: Buffer[]) {
    this.text = text;
    this.stop_reason = stopReason;
    this.#blocks = blocks;
    Object.freeze(this);
  }
  get blocks(): readonly Buffer[] {
    return this.#blocks;
  }
}

/** The text's blocks of an assistant.message's data made by TextBytes.message with its bytes; else undefined. */
export function heldMessage(
  data: unknown,
): { readonly blocks: readonly Buffer[]; readonly stop_reason: string } | undefined {
  return data instanceof HeldMessage ? data : undefined;
}

type Utf8Write = (this: Buffer, s: string, offset: number, length: number) => number;
/** Buffer's own UTF-8 writer, without buf.write's argument checks; buf.write where a runtime lacks it. */
const utf8Write: Utf8Write =
  (Buffer.prototype as unknown as { utf8Write?: Utf8Write }).utf8Write ??
  function (this: Buffer, s, offset, length) {
    return this.write(s, offset, length, "utf8");
  };

/**
 * A block of a turn's text as a string. ASCII (most model output) is read as Latin-1, which for those bytes is the
 * same text: Node makes a block of 1 MB or more an external string then (one copy), where UTF-8 decoding
 * allocates it on the JS heap; a 100k-delta turn's message cost about 5 ms per MB that way.
 */
function decode(block: Buffer): string {
  return block.toString(isAscii(block) ? "latin1" : "utf8");
}

/** What JSON writes other than as the character itself. */
const ESCAPED = /["\\\u0000-\u001f]/;
/** A surrogate not in a pair: UTF-8 cannot carry it (it would become U+FFFD). */
const LONE_SURROGATE = /\p{Cs}/u;

/**
 * A turn's whole text, gathered piece by piece as UTF-8 off the JS heap instead of as a string holding every
 * piece until the turn ends (which the GC copied and promoted, piece by piece). Each piece comes back as its
 * delta's data: the accumulator's own bytes (verbatimBytes) when JSON writes the piece as it is, so the log
 * copies them and the piece's string dies young; a plain `{text}` otherwise. A piece with a lone surrogate
 * turns it into a plain string from then on, so the whole text stays exactly the pieces joined.
 */
export class TextBytes {
  /** Full blocks, each the UTF-8 of whole pieces. */
  private readonly full: Buffer[] = [];
  private buf = Buffer.allocUnsafe(0);
  private at = 0;
  /** Whether every piece so far is one JSON writes as it is (so the whole text is too). */
  private plain = true;
  /** Set once a piece could not be held as UTF-8: the text so far as a string. */
  private string: string | undefined;

  /** Adds `piece` to the text; returns the data of its delta. */
  add(piece: string): { readonly text: string } {
    if (this.string !== undefined || LONE_SURROGATE.test(piece)) {
      this.string = this.text() + piece;
      return { text: piece };
    }
    // A UTF-16 unit never takes more than 3 bytes in UTF-8.
    this.reserve(piece.length * 3);
    const start = this.at;
    this.at += utf8Write.call(this.buf, piece, start, this.buf.length - start);
    if (!ESCAPED.test(piece)) return new VerbatimBytes(this.buf, start, this.at);
    this.plain = false;
    return { text: piece };
  }

  /**
   * Adds bytes [start, end) of `buf`, which must be plain (no quote, backslash or control character) and valid
   * UTF-8 (see plainToken); returns the data of their delta.
   */
  addBytes(buf: Buffer, start: number, end: number): { readonly text: string } {
    if (this.string !== undefined) {
      const piece = buf.toString("utf8", start, end);
      this.string += piece;
      return { text: piece };
    }
    const n = end - start;
    this.reserve(n);
    const at = this.at;
    this.at += buf.copy(this.buf, at, start, end);
    return new VerbatimBytes(this.buf, at, this.at);
  }

  get empty(): boolean {
    return this.string === undefined ? this.at === 0 && this.full.length === 0 : this.string.length === 0;
  }

  /**
   * Room for `n` more bytes: a new block when the current one is short (never copied: deltas not yet in the log
   * may be made of its bytes, and a long turn's text would be copied again at each doubling).
   */
  private reserve(n: number): void {
    if (this.buf.length - this.at >= n) return;
    if (this.at > 0) this.full.push(this.buf.subarray(0, this.at));
    this.buf = Buffer.allocUnsafe(Math.max(Math.min(this.buf.length * 2, 1 << 20), n, 64 * 1024));
    this.at = 0;
  }

  /**
   * The data of the assistant.message that closes the turn: the whole text and `stopReason`. When every piece
   * was plain it keeps the text's bytes too (heldMessage), so the log copies them instead of serialising a turn's
   * worth of text again.
   */
  message(stopReason: string): { text: string; stop_reason: string } {
    const text = this.text();
    if (this.string !== undefined || !this.plain) return { text, stop_reason: stopReason };
    const blocks = this.at > 0 ? [...this.full, this.buf.subarray(0, this.at)] : [...this.full];
    return new HeldMessage(text, stopReason, blocks);
  }

  /** The whole text so far. */
  text(): string {
    if (this.string !== undefined) return this.string;
    const last = decode(this.buf.subarray(0, this.at));
    return this.full.length === 0 ? last : this.full.map(decode).join("") + last;
  }
}

const DATA_TEXT = '"data":{"text":"';
const QUOTE = 0x22;

export const DELTA_HEAD = '{"attachment":"';
export const DELTA_TURN = '","turn":"';
export const DELTA_TEXT = '","event":"assistant.delta","data":{"text":"';
const DELTA_END = '"}}';
/** Anything that would make a JSON string token mean other than its characters, or not be one. */
const ESCAPE_OR_CONTROL = /[\\\u0000-\u001f]/;

/**
 * The ids of the last delta decoded from one stream. A runner's deltas name the same attachment and turn
 * thousands of times: found again, the same string objects are used (no copy, and a Map keyed by them finds its
 * hash already computed).
 */
export interface SeenIds {
  attachment: string;
  turn: string;
}

/** `line`'s characters [from, to) as a string: `known` itself when it holds exactly those. */
function same(line: string, from: number, to: number, known: string): string {
  return to - from === known.length && line.startsWith(known, from) ? known : line.slice(from, to);
}

/**
 * A delta spelled exactly as runners write one (the schema's member order, no whitespace) whose strings hold no
 * escape: decoded by position, without JSON.parse. Its three strings are then the token contents themselves.
 * Whatever else (another order, whitespace, an escape, an extra member) is undefined, for JSON.parse to decide.
 */
export function exactDelta(line: string, seen?: SeenIds): RunnerToBrainFrame | undefined {
  if (!line.startsWith(DELTA_HEAD) || !line.endsWith(DELTA_END)) return undefined;
  const a = DELTA_HEAD.length;
  // The first `"` after each opening quote closes that token: with no `\\` in the line none is escaped.
  const aEnd = line.indexOf('"', a);
  if (aEnd <= a || !line.startsWith(DELTA_TURN, aEnd)) return undefined;
  const t = aEnd + DELTA_TURN.length;
  const tEnd = line.indexOf('"', t);
  if (tEnd <= t || !line.startsWith(DELTA_TEXT, tEnd)) return undefined;
  const x = tEnd + DELTA_TEXT.length;
  const xEnd = line.length - DELTA_END.length;
  if (xEnd < x || line.indexOf('"', x) !== xEnd || ESCAPE_OR_CONTROL.test(line)) return undefined;
  const attachment = seen ? same(line, a, aEnd, seen.attachment) : line.slice(a, aEnd);
  const turn = seen ? same(line, t, tEnd, seen.turn) : line.slice(t, tEnd);
  if (seen) {
    seen.attachment = attachment;
    seen.turn = turn;
  }
  return {
    attachment,
    turn,
    event: "assistant.delta",
    data: new VerbatimText(line.slice(x, xEnd)),
  } as RunnerToBrainFrame;
}

/** Decodes one line a runner wrote on stdout: the fast path when it applies, decodeRunnerFrame otherwise. */
export function decodeRunnerFrameFast(line: string, seen?: SeenIds): RunnerToBrainFrame {
  if (line.length <= MAX_FRAME) {
    const delta = exactDelta(line, seen);
    if (delta) return delta;
    let obj: unknown;
    try {
      obj = JSON.parse(line);
    } catch {
      return decodeRunnerFrame(line); // the reference words the error
    }
    const frame = fastFrame(obj, line);
    if (frame) return frame;
  }
  return decodeRunnerFrame(line);
}

type Obj = Record<string, unknown>;

const isObject = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/** A non-empty string, as the schema's ids and tool names must be. */
const isId = (v: unknown): v is string => typeof v === "string" && v.length > 0;

/** Own enumerable keys: JSON.parse makes every key own and enumerable, `__proto__` included. */
function keyCount(o: Obj): number {
  let n = 0;
  for (const _ in o) n++;
  return n;
}

/** The parsed line as a frame when it is a valid assistant.delta or tool.call; undefined for anything else. */
export function fastFrame(obj: unknown, line: string): RunnerToBrainFrame | undefined {
  if (!isObject(obj)) return undefined;
  if (obj.event === "assistant.delta") return fastDelta(obj, line);
  if (obj.method === "tool.call") return fastToolCall(obj);
  return undefined;
}

/** Exactly {attachment, turn, event, data: {text}} with non-empty ids. */
function fastDelta(obj: Obj, line: string): RunnerToBrainFrame | undefined {
  const { attachment, turn, data } = obj;
  if (!isId(attachment) || !isId(turn) || !isObject(data) || keyCount(obj) !== 4) return undefined;
  const text = data.text;
  if (typeof text !== "string" || keyCount(data) !== 1) return undefined;
  // The line ends `"data":{"text":"<text>"}}`: `data` is its last member (the only one whose value ends in
  // `}`), its text token ends right before `"}}`, and the `"` before <text> is not escaped (a `:` precedes
  // it), so it opens that token: the token holds <text> itself, with no escape in it.
  const end = line.length - 3;
  const start = end - text.length;
  if (
    line.charCodeAt(end) === QUOTE &&
    line.charCodeAt(end + 1) === 0x7d &&
    line.charCodeAt(end + 2) === 0x7d &&
    line.startsWith(text, start) &&
    line.startsWith(DATA_TEXT, start - DATA_TEXT.length)
  ) {
    obj.data = new VerbatimText(text);
  }
  return obj as RunnerToBrainFrame;
}

/** Exactly {attachment, turn, id, method, params: {id, name, arguments: {...}}} with non-empty ids. */
function fastToolCall(obj: Obj): RunnerToBrainFrame | undefined {
  const { attachment, turn, id, params } = obj;
  if (!isId(attachment) || !isId(turn) || !isId(id) || !isObject(params) || keyCount(obj) !== 5)
    return undefined;
  const { id: callId, name, arguments: args } = params;
  if (!isId(callId) || !isId(name) || !isObject(args) || keyCount(params) !== 3) return undefined;
  // The reference's record copies `arguments` key by key; a `__proto__` key is left to it.
  if (Object.hasOwn(args, "__proto__")) return undefined;
  return obj as RunnerToBrainFrame;
}
