// Strict decoding of runner frames with errors that name the field and the fix.
import type { ZodType, z } from "zod";
import { preview } from "./ndjson.js";
import {
  type BrainToRunnerFrame,
  RunnerErrorReply,
  RunnerEvent,
  RunnerRequest,
  RunnerResultReply,
  type RunnerToBrainFrame,
  ToolCallRequest,
  ToolReply,
} from "./runner.js";

/** A frame that is not valid JSON or breaks the schema. Carries the offending line, shortened. */
export class ProtocolError extends Error {
  override name = "ProtocolError";
}

function parseObject(line: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (err) {
    throw new ProtocolError(notJson(line, err as Error));
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new ProtocolError(`a frame must be a JSON object: ${preview(line)}`);
  }
  return value as Record<string, unknown>;
}

/**
 * Why a line is not JSON. JSON.parse's message quotes the line, where an empty one or a leading byte order mark
 * (invisible when printed) cannot be seen: those two are named, with their fix.
 */
function notJson(line: string, err: Error): string {
  if (line.trim() === "") {
    return `an empty line is not a frame: the stream carries one JSON object per line and nothing else (write diagnostics to stderr)`;
  }
  if (line.charCodeAt(0) === 0xfeff) {
    return `the line starts with a byte order mark (U+FEFF), which JSON does not allow: write UTF-8 without one (in Python, encoding "utf-8", not "utf-8-sig"): ${preview(line)}`;
  }
  return `not JSON (${err.message}): ${preview(line)}`;
}

function check<T>(schema: ZodType<T>, value: unknown, what: string, line: string): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  throw new ProtocolError(`invalid ${what}: ${describeIssues(parsed.error)} in ${preview(line)}`);
}

export function describeIssues(error: z.ZodError): string {
  return error.issues
    .map((issue) => {
      const at = issue.path.length ? issue.path.join(".") : "(frame)";
      return `${at}: ${issue.message}`;
    })
    .join("; ");
}

export { preview };

/**
 * A field's value for a message. Never String(): a decoded object such as {"toString": 1} makes it throw a
 * TypeError instead of the ProtocolError the caller handles.
 */
function label(value: unknown): string {
  return preview(JSON.stringify(value) ?? typeof value, 80);
}

/** Decodes one line a runner wrote on stdout. */
export function decodeRunnerFrame(line: string): RunnerToBrainFrame {
  const obj = parseObject(line);
  if ("event" in obj) return check(RunnerEvent, obj, `event frame ${label(obj.event)}`, line);
  if ("method" in obj) {
    if (obj.method !== "tool.call") {
      throw new ProtocolError(`a runner may only send method "tool.call", not ${JSON.stringify(obj.method)}`);
    }
    return check(ToolCallRequest, obj, "tool.call frame", line);
  }
  // Checked against the one reply shape its member names: against the union, zod says only "Invalid input" of a
  // bad `error` or a missing attachment, and never which field is wrong.
  // A Go runner may write the member it does not use as null (see RunnerReply): only a non-null one counts.
  const hasError = "error" in obj && (obj.error !== null || !("result" in obj));
  if (hasError && "result" in obj && obj.result !== null) {
    throw new ProtocolError(`a reply frame has "result" or "error", not both: ${preview(line)}`);
  }
  if (hasError) return check(RunnerErrorReply, obj, "error reply frame", line);
  if ("result" in obj) return check(RunnerResultReply, obj, "reply frame", line);
  throw new ProtocolError(`frame has none of "event", "method", "result" or "error": ${preview(line)}`);
}

/** Decodes one line Brain wrote on a runner's stdin (the runner side of the protocol). */
export function decodeBrainFrame(line: string): BrainToRunnerFrame {
  const obj = parseObject(line);
  if ("method" in obj) return check(RunnerRequest, obj, `request ${label(obj.method)}`, line);
  return check(ToolReply, obj, "tool.call reply", line);
}
