// The relay's hot path: the frames a runner sends by the thousand (assistant.delta, tool.call) decoded without
// zod, under the very same strict rules. Anything these checks do not recognise as certainly valid goes to
// decodeRunnerFrame (frames.ts), which stays the reference: it decides what is valid and words every error.
// src/protocol/fast-frames.test.ts holds the two to the same answers on generated valid and invalid frames.
//
// An assistant.delta is read by a scanner that also notes where its `data` object lies in the line, so the event
// log can write that substring as it came instead of serialising the object again (see rawDataJson).
import { decodeRunnerFrame } from "./frames.js";
import { MAX_FRAME, type RunnerToBrainFrame, type ToolCallRequest } from "./runner.js";

/**
 * The JSON text of a decoded delta's `data`, as the runner wrote it. Non-enumerable, so JSON.stringify, spreads,
 * Object.keys and deep equality never see it; the data object is frozen so the text cannot drift from it.
 */
const RAW_JSON = Symbol("brain.rawJson");

/** The JSON of `data` exactly as its frame carried it, when the fast decoder kept it; otherwise undefined. */
export function rawDataJson(data: unknown): string | undefined {
  return typeof data === "object" && data !== null ? (data as { [RAW_JSON]?: string })[RAW_JSON] : undefined;
}

/** Decodes one line a runner wrote on stdout: the fast path when it applies, decodeRunnerFrame otherwise. */
export function decodeRunnerFrameFast(line: string): RunnerToBrainFrame {
  if (line.length <= MAX_FRAME) {
    const delta = fastDelta(line);
    if (delta) return delta;
    const call = fastToolCall(line);
    if (call) return call;
  }
  return decodeRunnerFrame(line);
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const COMMA = 0x2c;
const OPEN = 0x7b;
const CLOSE = 0x7d;

function skipWs(s: string, i: number): number {
  for (;;) {
    const c = s.charCodeAt(i);
    if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) i++;
    else return i;
  }
}

const isHex = (c: number) => (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);

/**
 * `s[i]` must open a JSON string: returns the index just past its closing quote, or -1 when it is not a valid
 * JSON string (a raw control character, a bad escape, no end). Lone surrogates are valid, as for JSON.parse.
 */
function scanString(s: string, i: number): number {
  if (s.charCodeAt(i) !== QUOTE) return -1;
  for (let j = i + 1; j < s.length; j++) {
    const c = s.charCodeAt(j);
    if (c === QUOTE) return j + 1;
    if (c < 0x20) return -1;
    if (c !== BACKSLASH) continue;
    const e = s.charCodeAt(++j);
    if (e === 0x75) {
      if (!(isHex(s.charCodeAt(j + 1)) && isHex(s.charCodeAt(j + 2)))) return -1;
      if (!(isHex(s.charCodeAt(j + 3)) && isHex(s.charCodeAt(j + 4)))) return -1;
      j += 4;
    } else if (
      e !== QUOTE &&
      e !== BACKSLASH &&
      e !== 0x2f &&
      e !== 0x62 &&
      e !== 0x66 &&
      e !== 0x6e &&
      e !== 0x72 &&
      e !== 0x74
    ) {
      return -1;
    }
  }
  return -1;
}

/** The value of the valid JSON string token s[start, end). */
function stringValue(s: string, start: number, end: number): string {
  const inner = s.slice(start + 1, end - 1);
  return inner.includes("\\") ? (JSON.parse(s.slice(start, end)) as string) : inner;
}

/**
 * `{"attachment":"…","turn":"…","event":"assistant.delta","data":{"text":"…"}}`, keys in any order, any JSON
 * whitespace, escapes anywhere in the values. Undefined for anything else (an escaped or repeated key, another
 * event, a missing or extra field, a wrong type, an empty id): decodeRunnerFrame then accepts or refuses it.
 */
export function fastDelta(s: string): RunnerToBrainFrame | undefined {
  let attachment: string | undefined;
  let turn: string | undefined;
  let event: string | undefined;
  let text: string | undefined;
  let dataStart = -1;
  let dataEnd = -1;
  let textStart = -1;
  let textEnd = -1;
  let i = skipWs(s, 0);
  if (s.charCodeAt(i) !== OPEN) return undefined;
  i = skipWs(s, i + 1);
  for (;;) {
    const keyEnd = scanString(s, i);
    if (keyEnd < 0) return undefined;
    const key = s.slice(i + 1, keyEnd - 1);
    i = skipWs(s, keyEnd);
    if (s.charCodeAt(i) !== COLON) return undefined;
    i = skipWs(s, i + 1);
    if (key === "data") {
      if (dataStart >= 0 || s.charCodeAt(i) !== OPEN) return undefined;
      dataStart = i;
      i = skipWs(s, i + 1);
      const innerKeyEnd = scanString(s, i);
      if (innerKeyEnd !== i + 6 || s.slice(i + 1, i + 5) !== "text") return undefined;
      i = skipWs(s, innerKeyEnd);
      if (s.charCodeAt(i) !== COLON) return undefined;
      i = skipWs(s, i + 1);
      textStart = i;
      textEnd = scanString(s, i);
      if (textEnd < 0) return undefined;
      i = skipWs(s, textEnd);
      if (s.charCodeAt(i) !== CLOSE) return undefined;
      dataEnd = ++i;
      text = stringValue(s, textStart, textEnd);
    } else {
      const end = scanString(s, i);
      if (end < 0) return undefined;
      const value = stringValue(s, i, end);
      if (key === "attachment" && attachment === undefined) attachment = value;
      else if (key === "turn" && turn === undefined) turn = value;
      else if (key === "event" && event === undefined) event = value;
      else return undefined;
      i = end;
    }
    i = skipWs(s, i);
    const c = s.charCodeAt(i);
    if (c === CLOSE) break;
    if (c !== COMMA) return undefined;
    i = skipWs(s, i + 1);
  }
  if (skipWs(s, i + 1) !== s.length) return undefined;
  if (event !== "assistant.delta" || !attachment || !turn || text === undefined) return undefined;
  const data = { text };
  // Written as-is only when it is the canonical form a serialiser would produce around the text token.
  if (dataEnd - dataStart === textEnd - textStart + 9) {
    Object.defineProperty(data, RAW_JSON, { value: s.slice(dataStart, dataEnd) });
  }
  Object.freeze(data);
  return { attachment, turn, event, data };
}

const TOOL_CALL_KEYS = 5;
const PARAMS_KEYS = 3;

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** A non-empty string, as the schema's ids and tool names must be. */
const isId = (v: unknown): v is string => typeof v === "string" && v.length > 0;

/**
 * A tool.call frame: JSON.parse, then the schema's checks by hand (exactly these keys, non-empty ids, arguments
 * an object). Undefined for anything else, including an `arguments` with a `__proto__` key, so the reference
 * decides the odd cases. `arguments` is shallow-copied as the schema's record would.
 */
export function fastToolCall(s: string): ToolCallRequest | undefined {
  // The method appears early in every frame a runner SDK writes; a line without it is never a tool.call.
  if (!s.includes('"tool.call"')) return undefined;
  let obj: unknown;
  try {
    obj = JSON.parse(s);
  } catch {
    return undefined;
  }
  if (!isObject(obj) || Object.keys(obj).length !== TOOL_CALL_KEYS) return undefined;
  const { attachment, turn, id, method, params } = obj;
  if (method !== "tool.call" || !isId(attachment) || !isId(turn) || !isId(id)) return undefined;
  if (!isObject(params) || Object.keys(params).length !== PARAMS_KEYS) return undefined;
  const { id: callId, name, arguments: args } = params;
  if (!isId(callId) || !isId(name) || !isObject(args)) return undefined;
  if (Object.hasOwn(args, "__proto__")) return undefined;
  return {
    attachment,
    turn,
    id,
    method,
    params: { id: callId, name, arguments: { ...args } },
  };
}
