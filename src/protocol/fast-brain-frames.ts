// The runner side's hot start: the frames Brain writes to a runner (open, prompt, ...) and what the runner SDK
// checks before it sends (request results, assistant.message data), decided without zod. A runner built on the
// SDK would otherwise load zod (hundreds of modules) before it could answer its first frame.
//
// Each check here only ever says "certainly valid": anything it does not recognise goes to the zod schemas of
// runner.ts, which stay the reference, decide, and word the error (the SDK loads them on that rare path).
// fast-brain-frames.test.ts holds the two to the same answers on the same inputs. This module must not import
// zod, nor any module that does, except as types.
import type { BrainToRunnerFrame, RunnerMethod } from "./runner.js";

type Obj = Record<string, unknown>;

const isObject = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
/** A non-empty string, as the schema's ids, names and dirs must be. */
const isId = (v: unknown): v is string => typeof v === "string" && v.length > 0;
const optString = (v: unknown) => v === undefined || typeof v === "string";

/** Every enumerable key of `o` is one of `allowed` (strict objects: an unknown field is an error). */
function keysWithin(o: Obj, allowed: readonly string[]): boolean {
  for (const key in o) if (!allowed.includes(key)) return false;
  return true;
}

/** A decoded JSON object as z.record(z.string(), z.unknown()) takes it; a `__proto__` key is left to zod. */
const isJsonRecord = (v: unknown): boolean => isObject(v) && !Object.hasOwn(v, "__proto__");

const CONFIG_KEYS = ["model", "system_prompt", "tools", "tool_mode", "options"] as const;
function isSessionConfig(c: unknown): boolean {
  if (!isObject(c) || !keysWithin(c, CONFIG_KEYS)) return false;
  const { model, system_prompt, tools, tool_mode, options } = c;
  return (
    optString(model) &&
    optString(system_prompt) &&
    (tools === undefined || (Array.isArray(tools) && tools.every((t) => typeof t === "string"))) &&
    (tool_mode === undefined || tool_mode === "native" || tool_mode === "bound") &&
    (options === undefined || isJsonRecord(options))
  );
}

const TOOL_KEYS = ["name", "description", "input_schema"] as const;
function isToolSchema(t: unknown): boolean {
  if (!isObject(t) || !keysWithin(t, TOOL_KEYS)) return false;
  return isId(t.name) && optString(t.description) && isJsonRecord(t.input_schema);
}

const PROVIDER_KEYS = ["api_key", "base_url", "api"] as const;
function isProvider(p: unknown): boolean {
  if (!isObject(p) || !keysWithin(p, PROVIDER_KEYS)) return false;
  return optString(p.api_key) && optString(p.base_url) && optString(p.api);
}

const OPEN_KEYS = ["session_id", "dir", "config", "tools", "provider"] as const;
function isOpenParams(p: unknown): boolean {
  if (!isObject(p) || !keysWithin(p, OPEN_KEYS)) return false;
  const { session_id, dir, config, tools, provider } = p;
  return (
    isId(session_id) &&
    isId(dir) &&
    isSessionConfig(config) &&
    Array.isArray(tools) &&
    tools.every(isToolSchema) &&
    isProvider(provider)
  );
}

const isTextParams = (p: unknown): boolean =>
  isObject(p) && keysWithin(p, ["text"]) && typeof p.text === "string";

const NO_TURN = ["attachment", "id", "method", "params"] as const;
const WITH_TURN = ["attachment", "turn", "id", "method", "params"] as const;

function isRequest(o: Obj): boolean {
  if (!isId(o.attachment) || !isId(o.id)) return false;
  switch (o.method) {
    case "open":
      return keysWithin(o, NO_TURN) && isOpenParams(o.params);
    case "prompt":
    case "steer":
      return keysWithin(o, WITH_TURN) && isId(o.turn) && isTextParams(o.params);
    case "interrupt":
      return keysWithin(o, WITH_TURN) && isId(o.turn) && o.params === null;
    case "checkpoint":
    case "detach":
      return keysWithin(o, NO_TURN) && o.params === null;
    default:
      return false;
  }
}

const isToolContent = (c: unknown): boolean =>
  isObject(c) && keysWithin(c, ["type", "text"]) && c.type === "text" && typeof c.text === "string";

function isToolReply(o: Obj): boolean {
  if (!keysWithin(o, ["attachment", "turn", "id", "result"])) return false;
  if (!isId(o.attachment) || !isId(o.turn) || !isId(o.id)) return false;
  const { result } = o;
  return (
    isObject(result) &&
    keysWithin(result, ["content", "is_error"]) &&
    Array.isArray(result.content) &&
    result.content.every(isToolContent) &&
    typeof result.is_error === "boolean"
  );
}

/**
 * One line Brain wrote on a runner's stdin, when it is certainly a valid frame: the parsed object itself (what
 * decodeBrainFrame would return, field for field). Undefined for anything else: decodeBrainFrame decides.
 */
export function decodeBrainFrameFast(line: string): BrainToRunnerFrame | undefined {
  let obj: unknown;
  try {
    obj = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (!isObject(obj)) return undefined;
  // As the reference: a frame with a method is a request, any other a tool reply.
  const valid = "method" in obj ? isRequest(obj) : isToolReply(obj);
  return valid ? (obj as BrainToRunnerFrame) : undefined;
}

/** A value the runner's code made, as a strict zod object takes it: a plain object, no symbol or hidden key. */
function isPlainRecord(v: unknown): v is Obj {
  if (!isObject(v) || Object.getPrototypeOf(v) !== Object.prototype) return false;
  if (Object.getOwnPropertySymbols(v).length > 0 || Object.hasOwn(v, "__proto__")) return false;
  return Object.keys(v).length === Object.getOwnPropertyNames(v).length;
}

const isCount = (v: unknown): boolean => Number.isSafeInteger(v) && (v as number) >= 0;

function isNativeFile(f: unknown): boolean {
  if (!isPlainRecord(f) || !keysWithin(f, ["path", "size", "append_only"])) return false;
  return (
    isId(f.path) && isCount(f.size) && (f.append_only === undefined || typeof f.append_only === "boolean")
  );
}

const isEmpty = (v: unknown): boolean => isPlainRecord(v) && keysWithin(v, []);

/** Each index of `items`, holes included (`every` skips the holes of a sparse array; zod does not). */
function everyItem(items: unknown[], check: (item: unknown) => boolean): boolean {
  for (let i = 0; i < items.length; i++) if (!check(items[i])) return false;
  return true;
}

/** Whether `result` is certainly what RequestResults[method] accepts; false means "ask the schema". */
export function isRequestResult(method: RunnerMethod, result: unknown): boolean {
  // A Go runner's nil map or slice: the empty result, for every method (see RequestResults).
  if (result === null) return true;
  switch (method) {
    case "open":
      return isPlainRecord(result);
    case "prompt":
      return (
        isPlainRecord(result) &&
        keysWithin(result, ["interrupted"]) &&
        (result.interrupted === undefined || typeof result.interrupted === "boolean")
      );
    case "checkpoint":
      return Array.isArray(result) && everyItem(result, isNativeFile);
    case "steer":
    case "interrupt":
    case "detach":
      return isEmpty(result);
  }
}

/** The first field of `o` not among `allowed`, if any. */
function unknownKey(o: Obj, allowed: readonly string[]): string | undefined {
  for (const key in o) if (!allowed.includes(key)) return key;
  return undefined;
}

const USAGE_KEYS = ["input", "output", "cache_read", "cache_write", "cost"] as const;
const WHOLE = "must be a whole number ≥ 0";

function usageProblem(u: unknown): string | undefined {
  if (!isPlainRecord(u)) return "usage: must be an object {input, output, cache_read?, cache_write?, cost?}";
  const extra = unknownKey(u, USAGE_KEYS);
  if (extra !== undefined) return `usage: unknown field "${extra}" (known: ${USAGE_KEYS.join(", ")})`;
  if (!isCount(u.input)) return `usage.input: ${WHOLE}`;
  if (!isCount(u.output)) return `usage.output: ${WHOLE}`;
  if (u.cache_read !== undefined && !isCount(u.cache_read)) return `usage.cache_read: ${WHOLE}`;
  if (u.cache_write !== undefined && !isCount(u.cache_write)) return `usage.cache_write: ${WHOLE}`;
  const { cost } = u;
  if (cost !== undefined && !(typeof cost === "number" && Number.isFinite(cost) && cost >= 0))
    return "usage.cost: must be a number ≥ 0";
  return undefined;
}

const MESSAGE_KEYS = ["text", "usage", "stop_reason"] as const;

/**
 * What is wrong with an assistant.message's data, or undefined when MessageData accepts it. Worded here, not by
 * zod: the SDK checks each message synchronously and must not load zod to do it. Exact for plain data (object
 * literals, JSON); anything else, such as a class instance, is refused as not a plain object.
 */
export function messageDataProblem(data: unknown): string | undefined {
  if (!isPlainRecord(data)) return "must be a plain object {text, usage?, stop_reason?}";
  const extra = unknownKey(data, MESSAGE_KEYS);
  if (extra !== undefined) return `unknown field "${extra}" (known: ${MESSAGE_KEYS.join(", ")})`;
  if (typeof data.text !== "string") return "text: must be a string";
  if (data.usage !== undefined) {
    const problem = usageProblem(data.usage);
    if (problem) return problem;
  }
  if (!optString(data.stop_reason)) return "stop_reason: must be a string";
  return undefined;
}
