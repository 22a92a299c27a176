// The relay's hot path: the frames a runner sends by the thousand (assistant.delta, tool.call) decoded without
// zod, under the very same strict rules: JSON.parse (native, faster than any scanner written in JS), then the
// schema's checks by hand on the parsed object, which is kept as the frame rather than copied. Anything these
// checks do not recognise as certainly valid goes to decodeRunnerFrame (frames.ts), which stays the reference: it
// decides what is valid and words every error. fast-frames.test.ts holds the two to the same answers on
// generated valid and invalid frames.
//
// A delta whose text the runner wrote verbatim (no escapes: the common case) gets a VerbatimText as its data, so
// the event log writes that text as it came instead of serialising it again (see verbatimText).
import { fastFrame, isObject, VerbatimText } from "./fast-parsed.js";
import { decodeRunnerFrame } from "./frames.js";
import { MAX_FRAME, type RunnerToBrainFrame } from "./runner.js";

/** Up to this many bytes, a text is copied byte by byte rather than with buf.copy (see copyTo). */
const SHORT_COPY = 256;

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
  /** Set by TextBytes, whose blocks are never written again and live until the turn's message is made. */
  readonly #stable: boolean;
  #text: string | undefined;
  constructor(buf: Buffer, start: number, end: number, stable = false) {
    this.#buf = buf;
    this.#start = start;
    this.#end = end;
    this.#stable = stable;
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
    const src = this.#buf;
    const start = this.#start;
    const end = this.#end;
    if (end - start > SHORT_COPY) return src.copy(target, at, start, end);
    // A delta's text is short: buf.copy makes a Uint8Array view per call (young garbage, thousands per chunk)
    // and passes the argument checks, which cost more than copying its bytes one by one (measured on the relay).
    for (let i = start; i < end; i++) target[at++] = src[i]!;
    return end - start;
  }
  get byteLength(): number {
    return this.#end - this.#start;
  }
  /**
   * The buffer holding the bytes when it is stable (a TextBytes block: its bytes are never overwritten, and the
   * turn keeps it anyway), so a holder may keep [start, end) of it instead of a copy; undefined otherwise (a
   * runner's stdout chunk, which nothing else keeps).
   */
  get stableBuffer(): Buffer | undefined {
    return this.#stable ? this.#buf : undefined;
  }
  get start(): number {
    return this.#start;
  }
  get end(): number {
    return this.#end;
  }
}

/** A delta's data made of bytes of a TextBytes block (see VerbatimBytes.stableBuffer). */
export function stableBytes(buf: Buffer, start: number, end: number): { readonly text: string } {
  return new VerbatimBytes(buf, start, end, true);
}

/** A delta's data made of a chunk's bytes (see VerbatimBytes): `{text}` where the bytes are the text. */
export function verbatimBytes(buf: Buffer, start: number, end: number): { readonly text: string } {
  return new VerbatimBytes(buf, start, end);
}

/** The bytes behind a delta's data when it was made by verbatimBytes; otherwise undefined. */
export function heldBytes(data: unknown):
  | {
      copyTo(target: Buffer, at: number): number;
      readonly byteLength: number;
      readonly stableBuffer: Buffer | undefined;
      readonly start: number;
      readonly end: number;
    }
  | undefined {
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

/** An assistant.message's data: `text` and `stopReason`, the text held as `blocks` too (see HeldMessage). */
export function heldMessageOf(
  text: string,
  stopReason: string,
  blocks: Buffer[],
): { text: string; stop_reason: string } {
  return new HeldMessage(text, stopReason, blocks);
}

/** The text's blocks of an assistant.message's data made by TextBytes.message with its bytes; else undefined. */
export function heldMessage(
  data: unknown,
): { readonly blocks: readonly Buffer[]; readonly stop_reason: string } | undefined {
  return data instanceof HeldMessage ? data : undefined;
}

export { fastFrame, verbatimText } from "./fast-parsed.js";

export const DELTA_HEAD = '{"attachment":"';
export const DELTA_TURN = '","turn":"';
export const DELTA_TEXT = '","event":"assistant.delta","data":{"text":"';
const DELTA_END = '"}}';
/** Anything that would make a JSON string token mean other than its characters, or not be one. */
const ESCAPE_OR_CONTROL = /[\\\u0000-\u001f]/;

/**
 * The ids of the last delta decoded from one stream. A runner's deltas name the same attachment and turn thousands
 * of times: found again, the same strings are used (no copy, and a Map keyed by them finds its hash computed).
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

const CALL_ID = '","id":"';
const CALL_PARAMS = '","method":"tool.call","params":{"id":"';
const CALL_NAME = '","name":"';
const CALL_ARGS = '","arguments":{';

/** Where the token opened before `from` closes (its first `"`), when `literal` follows it; else -1. */
function closedBefore(line: string, from: number, literal: string): number {
  const end = line.indexOf('"', from);
  return end !== -1 && line.startsWith(literal, end) ? end : -1;
}

/** A token's contents [from, to) as a non-empty string: `known` when equal, else a slice with no escape. */
function token(line: string, from: number, to: number, known?: string): string | undefined {
  if (to <= from) return undefined; // an empty id
  if (known !== undefined && to - from === known.length && line.startsWith(known, from)) return known;
  const value = line.slice(from, to);
  return ESCAPE_OR_CONTROL.test(value) ? undefined : value;
}

/**
 * A tool call spelled exactly as runners write one (the schema's member order, no whitespace before the
 * arguments, no escape in its ids, method and name), decoded by position: only its arguments go through
 * JSON.parse. With no `\\` in a token the first `"` after its opening quote closes it, so each token's contents
 * are the string itself. Whatever else (another order, an escape, an extra member, arguments that are no JSON
 * object or hold `__proto__`) is undefined, for the full decode to decide.
 */
export function exactToolCall(line: string, seen?: SeenIds): RunnerToBrainFrame | undefined {
  if (!line.startsWith(DELTA_HEAD) || !line.endsWith("}}")) return undefined;
  const a = DELTA_HEAD.length;
  const aEnd = closedBefore(line, a, DELTA_TURN);
  if (aEnd === -1) return undefined;
  const t = aEnd + DELTA_TURN.length;
  const tEnd = closedBefore(line, t, CALL_ID);
  if (tEnd === -1) return undefined;
  const i = tEnd + CALL_ID.length;
  const iEnd = closedBefore(line, i, CALL_PARAMS);
  if (iEnd === -1) return undefined;
  const c = iEnd + CALL_PARAMS.length;
  const cEnd = closedBefore(line, c, CALL_NAME);
  if (cEnd === -1) return undefined;
  const n = cEnd + CALL_NAME.length;
  const nEnd = closedBefore(line, n, CALL_ARGS);
  if (nEnd === -1) return undefined;
  const attachment = token(line, a, aEnd, seen?.attachment);
  const turn = token(line, t, tEnd, seen?.turn);
  const id = token(line, i, iEnd);
  const callId = token(line, c, cEnd);
  const name = token(line, n, nEnd);
  if (!attachment || !turn || !id || !callId || !name) return undefined;
  let args: unknown;
  try {
    args = JSON.parse(line.slice(nEnd + CALL_ARGS.length - 1, line.length - 2)); // `{` to before the last `}}`
  } catch {
    return undefined;
  }
  // The reference's record copies `arguments` key by key; a `__proto__` key is left to it.
  if (!isObject(args) || Object.hasOwn(args, "__proto__")) return undefined;
  return {
    attachment,
    turn,
    id,
    method: "tool.call",
    params: { id: callId, name, arguments: args },
  } as RunnerToBrainFrame;
}

/** Decodes one line a runner wrote on stdout: the fast path when it applies, decodeRunnerFrame otherwise. */
export function decodeRunnerFrameFast(line: string, seen?: SeenIds): RunnerToBrainFrame {
  if (line.length <= MAX_FRAME) {
    const delta = exactDelta(line, seen);
    if (delta) return delta;
    const call = exactToolCall(line, seen);
    if (call) return call;
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
