// Checks by hand, on a frame JSON.parse made, of the schema's rules for the frames a runner sends by the thousand
// (assistant.delta, tool.call): the parsed object is kept as the frame rather than copied. Anything not certainly
// valid is undefined, for the zod reference (frames.ts) to decide; fast-frames.test.ts holds the two together.
import type { RunnerToBrainFrame } from "./runner.js";

/**
 * A delta's data whose text appears in its frame exactly as JSON would write it (no character needed
 * escaping), so `{"text":"` + text + `"}` is its JSON. Frozen: the text cannot drift from that promise, and no
 * field can be added that the log line would miss. JSON.stringify and deep equality see a plain `{text}`.
 */
export class VerbatimText {
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

const DATA_TEXT = '"data":{"text":"';
const QUOTE = 0x22;

type Obj = Record<string, unknown>;

export const isObject = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

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
