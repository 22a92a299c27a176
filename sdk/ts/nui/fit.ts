// Brain reads an extension host's lines up to 4 MiB and ends a host that writes a longer one, with every session
// it serves; an HTTP agent's SSE events it reads up to 64 MiB. So each event goes out in pieces that fit its
// transport: long text in pieces; an error message or a tool result cut short, saying so (what a person reads of
// either is its start); anything else too long is refused to the code that emitted it, as an error it can catch,
// while the host serves on.
import { MAX_SSE_EVENT_CHARS } from "../../../src/protocol/sse.js";
import { MAX_DELTA_CHARS, splitText } from "../turn.js";
import type { HarnessEvent } from "./types.js";

/** What an event's own JSON may take of a line; the rest is room for the JSON-RPC envelope and the run id. */
export const MAX_EVENT_BYTES = 4 * 1024 * 1024 - 64 * 1024;

/** How large an event may be on a transport, and how that limit is named to the code an event is refused to. */
export interface EventLimit {
  bytes: number;
  what: string;
}

/** Stdio and TCP: one JSON-RPC line. */
export const HOST_LINE_LIMIT: EventLimit = {
  bytes: MAX_EVENT_BYTES,
  what: "the 4 MiB line Brain reads from a host",
};

/** HTTP/SSE: one event, which Brain counts in characters (never more than its bytes), with room for its framing. */
export const SSE_EVENT_LIMIT: EventLimit = {
  bytes: MAX_SSE_EVENT_CHARS - 64 * 1024,
  what: "the 64 MiB event Brain reads from an HTTP agent",
};

/** The events to send for `event`, each within `limit`; throws for one that cannot be made to fit. */
export function fitted(event: HarnessEvent, limit: EventLimit = HOST_LINE_LIMIT): HarnessEvent[] {
  if (event.type === "text" && typeof event.content === "string") {
    if (event.content.length > MAX_DELTA_CHARS)
      return splitText(event.content, MAX_DELTA_CHARS).flatMap((content) =>
        fitted({ ...event, content }, limit),
      );
    // The hot path: a text event of the usual two fields is short enough as it is (6 bytes a unit at most).
    if (Object.keys(event).length === 2) return [event];
  }
  const bytes = byteLength(event);
  if (bytes <= limit.bytes) return [event];
  const short =
    event.type === "error" && typeof event.error === "string"
      ? { ...event, error: cut(event.error, "error message", bytes, limit) }
      : event.type === "tool_result"
        ? { ...event, content: cut(contentText(event.content), "tool result", bytes, limit) }
        : undefined;
  if (short && byteLength(short) <= limit.bytes) return [short];
  throw new Error(`a "${String(event.type)}" event of ${bytes} bytes is over ${limit.what}; it was not sent`);
}

function byteLength(event: HarnessEvent): number {
  return Buffer.byteLength(JSON.stringify(event));
}

function contentText(content: unknown): string {
  return typeof content === "string" ? content : (JSON.stringify(content) ?? "");
}

function cut(text: string, what: string, bytes: number, limit: EventLimit): string {
  const kept = splitText(text, MAX_DELTA_CHARS)[0] ?? "";
  return `${kept}\n… [cut short: the whole ${what} took ${bytes} bytes, over ${limit.what}]`;
}
