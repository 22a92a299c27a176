// Brain reads an extension host's lines up to 4 MiB and ends a host that writes a longer one, with every session
// it serves. So each event goes out in lines that fit: long text in pieces; an error message or a tool result cut
// short, saying so (what a person reads of either is its start); anything else too long is refused to the code
// that emitted it, as an error it can catch, while the host serves on.
import { MAX_DELTA_CHARS, splitText } from "../turn.js";
import type { HarnessEvent } from "./types.js";

/** What an event's own JSON may take of a line; the rest is room for the JSON-RPC envelope and the run id. */
export const MAX_EVENT_BYTES = 4 * 1024 * 1024 - 64 * 1024;

/** The events to send for `event`, each under MAX_EVENT_BYTES; throws for one that cannot be made to fit. */
export function fitted(event: HarnessEvent): HarnessEvent[] {
  if (event.type === "text" && typeof event.content === "string") {
    if (event.content.length > MAX_DELTA_CHARS)
      return splitText(event.content, MAX_DELTA_CHARS).flatMap((content) => fitted({ ...event, content }));
    // The hot path: a text event of the usual two fields is short enough as it is (6 bytes a unit at most).
    if (Object.keys(event).length === 2) return [event];
  }
  const bytes = byteLength(event);
  if (bytes <= MAX_EVENT_BYTES) return [event];
  const short =
    event.type === "error" && typeof event.error === "string"
      ? { ...event, error: cut(event.error, "error message", bytes) }
      : event.type === "tool_result"
        ? { ...event, content: cut(contentText(event.content), "tool result", bytes) }
        : undefined;
  if (short && byteLength(short) <= MAX_EVENT_BYTES) return [short];
  throw new Error(
    `a "${String(event.type)}" event of ${bytes} bytes is over the 4 MiB line Brain reads from a host; it was not sent`,
  );
}

function byteLength(event: HarnessEvent): number {
  return Buffer.byteLength(JSON.stringify(event));
}

function contentText(content: unknown): string {
  return typeof content === "string" ? content : (JSON.stringify(content) ?? "");
}

function cut(text: string, what: string, bytes: number): string {
  const kept = splitText(text, MAX_DELTA_CHARS)[0] ?? "";
  return `${kept}\n… [cut short: the whole ${what} took ${bytes} bytes, over the 4 MiB line Brain reads from a host]`;
}
