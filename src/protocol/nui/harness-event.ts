// nui's harness events: the `params` of a `harness.event` JSON-RPC notification (stdio, TCP) and the `data` of an
// SSE event (HTTP). docs/protocol.md#harness-events names seven shapes; nui's Go client also accepts a few older spellings
// (`tool_call_end`, `tool_call_result`, `imageData`/`imageMediaType`), so both are read. Third-party output is
// decoded leniently: unknown types and unknown fields are skipped, never fatal.
import { z } from "zod";
import { describeIssues } from "../frames.js";
import { clip } from "../jsonrpc.js";

const text = z.object({ type: z.literal("text"), content: z.string() });
const done = z.object({ type: z.literal("done"), sessionId: z.string().optional() });
const error = z.object({ type: z.literal("error"), error: z.string() });
const toolCall = z.object({
  type: z.literal("tool_call"),
  toolCallId: z.string().min(1),
  name: z.string().min(1),
  args: z.unknown().optional(),
});
const toolResult = z.object({
  type: z.literal("tool_result"),
  toolCallId: z.string().min(1),
  content: z.unknown().optional(),
  isError: z.boolean().optional(),
  is_error: z.boolean().optional(),
});
const hitlRequest = z.object({
  type: z.literal("hitl_request"),
  requestId: z.string().min(1),
  kind: z.string().optional(),
  payload: z.record(z.string(), z.unknown()).optional(),
});
const image = z.object({ type: z.literal("image"), mimeType: z.string().min(1), data: z.string() });

/** A harness event after decoding, in nui's documented spelling. */
export type NuiHarnessEvent =
  | { type: "text"; content: string }
  | { type: "done"; sessionId?: string }
  | { type: "error"; error: string }
  | { type: "tool_call"; toolCallId: string; name: string; args: Record<string, unknown> }
  | { type: "tool_result"; toolCallId: string; content: string; isError: boolean }
  | { type: "hitl_request"; requestId: string; kind: string; payload: Record<string, unknown> }
  | { type: "image"; mimeType: string; data: string };

export type DecodedHarnessEvent =
  | { ok: true; event: NuiHarnessEvent }
  /** `skip`: an unknown type, or a known one too malformed to use; `reason` says which. */
  | { ok: false; reason: string };

/** Maps nui Go's older spellings onto the documented ones. */
function canonical(raw: Record<string, unknown>): Record<string, unknown> {
  switch (raw.type) {
    case "tool_call_end":
      return { ...raw, type: "tool_call", name: raw.name ?? raw.toolName, args: raw.args ?? raw.toolArgs };
    case "tool_call_result":
      return { ...raw, type: "tool_result" };
    case "image":
      return {
        ...raw,
        mimeType: raw.mimeType ?? raw.imageMediaType,
        data: raw.data ?? raw.imageData,
      };
    default:
      return raw;
  }
}

/** Tool arguments as an object: nui sends an object, nui Go's older events a JSON string. */
function argsObject(args: unknown): Record<string, unknown> {
  if (args === undefined || args === null) return {};
  if (typeof args === "string") {
    try {
      const parsed: unknown = JSON.parse(args);
      if (parsed && typeof parsed === "object" && !Array.isArray(parsed))
        return parsed as Record<string, unknown>;
    } catch {
      // not JSON: keep it as text below
    }
    return { value: args };
  }
  if (typeof args === "object" && !Array.isArray(args)) return args as Record<string, unknown>;
  return { value: args };
}

function contentText(content: unknown): string {
  if (content === undefined || content === null) return "";
  return typeof content === "string" ? content : JSON.stringify(content);
}

/**
 * Why `value` cannot be written as JSON (nested deeper than JSON.stringify manages), or undefined. JSON.parse takes
 * nesting that JSON.stringify cannot give back: such a value would throw wherever it is written (the log), and
 * the throw, from a host's stream handler, would end the daemon.
 */
export function notWritable(value: unknown): string | undefined {
  if (value === null || typeof value !== "object") return undefined;
  try {
    JSON.stringify(value);
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}

/** An event whose `member` (kept as JSON: tool_call's args, tool_result's content, hitl_request's payload) is not. */
function unwritable(type: string, member: string, why: string): DecodedHarnessEvent {
  return { ok: false, reason: `"${type}" event skipped: its ${member} cannot be written as JSON (${why})` };
}

const SCHEMAS = {
  text,
  done,
  error,
  tool_call: toolCall,
  tool_result: toolResult,
  hitl_request: hitlRequest,
  image,
} as const;

/** Decodes one event object. Never throws. */
export function decodeHarnessEvent(value: unknown): DecodedHarnessEvent {
  if (!value || typeof value !== "object" || Array.isArray(value)) {
    return { ok: false, reason: "a harness event must be a JSON object" };
  }
  // Streamed text is nearly every event: checked by hand, without the schema.
  const fast = value as { type?: unknown; content?: unknown };
  if (fast.type === "text" && typeof fast.content === "string") {
    return { ok: true, event: { type: "text", content: fast.content } };
  }
  let raw = canonical(value as Record<string, unknown>);
  // nui's SDK fills `requestId` but nui Go also accepts `request_id`.
  if (raw.type === "hitl_request" && raw.requestId === undefined) raw = { ...raw, requestId: raw.request_id };
  const type = raw.type;
  if (typeof type !== "string") return { ok: false, reason: 'a harness event needs a string "type"' };
  const schema = SCHEMAS[type as keyof typeof SCHEMAS];
  if (!schema) return { ok: false, reason: `unknown harness event type "${clip(type)}" skipped` };
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    return { ok: false, reason: `"${type}" event skipped: ${describeIssues(parsed.error)}` };
  }
  const data = parsed.data;
  switch (data.type) {
    case "done":
      return {
        ok: true,
        event: data.sessionId ? { type: "done", sessionId: data.sessionId } : { type: "done" },
      };
    case "tool_call": {
      // Also args given as a JSON string, parsed here.
      const args = argsObject(data.args);
      const why = notWritable(args);
      if (why !== undefined) return unwritable(type, "args", why);
      return { ok: true, event: { type: "tool_call", toolCallId: data.toolCallId, name: data.name, args } };
    }
    case "tool_result": {
      const why = notWritable(data.content);
      if (why !== undefined) return unwritable(type, "content", why);
      return {
        ok: true,
        event: {
          type: "tool_result",
          toolCallId: data.toolCallId,
          content: contentText(data.content),
          isError: data.isError ?? data.is_error ?? false,
        },
      };
    }
    case "hitl_request": {
      const why = notWritable(data.payload);
      if (why !== undefined) return unwritable(type, "payload", why);
      return {
        ok: true,
        event: {
          type: "hitl_request",
          requestId: data.requestId,
          kind: data.kind || "question",
          payload: data.payload ?? {},
        },
      };
    }
    case "text":
      return { ok: true, event: { type: "text", content: data.content } };
    case "error":
      return { ok: true, event: { type: "error", error: data.error } };
    case "image":
      return { ok: true, event: { type: "image", mimeType: data.mimeType, data: data.data } };
  }
}
