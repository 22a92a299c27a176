// Low-level HTTP helpers: body reading, JSON replies, and an SSE writer that stops quietly when the client
// goes away (an interrupted stream is an expected event here, never a server error).
import type { IncomingMessage, ServerResponse } from "node:http";
import type { SseFrame } from "./types.js";

export async function readBody(req: IncomingMessage): Promise<string> {
  const parts: Buffer[] = [];
  for await (const part of req) parts.push(part as Buffer);
  return Buffer.concat(parts).toString("utf8");
}

export function flatHeaders(req: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) out[name] = Array.isArray(value) ? value.join(", ") : value;
  }
  return out;
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent || res.destroyed) return;
  const text = JSON.stringify(body);
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

/** Resolves after `ms`, or at once when `signal` aborts. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });
}

/** Waits for the socket to drain, or for the client to leave. */
/** Until the client goes away (or close() destroys the socket). */
function stalled(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    signal.addEventListener("abort", () => resolve(), { once: true });
  });
}

function drained(res: ServerResponse, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off("drain", done);
      signal.removeEventListener("abort", done);
      resolve();
    };
    res.once("drain", done);
    signal.addEventListener("abort", done, { once: true });
  });
}

export function encodeFrame(frame: SseFrame): string {
  const data = typeof frame.data === "string" ? frame.data : JSON.stringify(frame.data);
  return `${frame.event ? `event: ${frame.event}\n` : ""}data: ${data}\n\n`;
}

/** One JSON object a line (Ollama's streaming framing). */
export function encodeNdjsonFrame(frame: SseFrame): string {
  return `${typeof frame.data === "string" ? frame.data : JSON.stringify(frame.data)}\n`;
}

export interface StreamFraming {
  contentType: string;
  encode(frame: SseFrame): string;
}

export const SSE_FRAMING: StreamFraming = {
  contentType: "text/event-stream; charset=utf-8",
  encode: encodeFrame,
};
export const NDJSON_FRAMING: StreamFraming = {
  contentType: "application/x-ndjson",
  encode: encodeNdjsonFrame,
};

/** Writes frames as server-sent events; returns false when the client left before the last one. */
export async function writeSse(
  res: ServerResponse,
  frames: Iterable<SseFrame>,
  signal: AbortSignal,
  headers: Record<string, string> = {},
): Promise<boolean> {
  return writeStream(res, frames, signal, headers, SSE_FRAMING);
}

/**
 * Writes frames in the given framing; returns false when the client left before the last one. With
 * `breakAfter`, the connection is destroyed after that many frames, as a proxy or provider dropping it would;
 * with `endAfter`, the response ends after that many, as a stream cut short without an error; with `fail`, the
 * response ends after `fail.after` frames and that frame, the provider's own word of an error mid-stream; with
 * `stallAfter`, nothing more is written after that many, the connection held open until the client leaves.
 */
export async function writeStream(
  res: ServerResponse,
  frames: Iterable<SseFrame>,
  signal: AbortSignal,
  headers: Record<string, string>,
  framing: StreamFraming,
  cut: {
    breakAfter?: number;
    endAfter?: number;
    stallAfter?: number;
    fail?: { after: number; frame: SseFrame };
  } = {},
): Promise<boolean> {
  const { breakAfter, endAfter, stallAfter, fail } = cut;
  res.writeHead(200, {
    "content-type": framing.contentType,
    "cache-control": "no-cache",
    connection: "keep-alive",
    ...headers,
  });
  // Headers go out now, so a client sees the stream open even when the first frame is slow.
  res.flushHeaders();
  let written = 0;
  for (const frame of frames) {
    if (breakAfter !== undefined && written >= breakAfter) {
      res.destroy();
      return false;
    }
    if (endAfter !== undefined && written >= endAfter) break;
    if (stallAfter !== undefined && written >= stallAfter) {
      await stalled(signal);
      return false;
    }
    if (fail && written >= fail.after) break;
    if (frame.delayMs) await pause(frame.delayMs, signal);
    if (signal.aborted) return false;
    if (!res.write(framing.encode(frame))) await drained(res, signal);
    written++;
  }
  if (signal.aborted) return false;
  if (fail) res.write(framing.encode(fail.frame));
  res.end();
  return true;
}

/** An AbortSignal that fires when the response closes before it was finished (the client went away). */
export function clientGone(res: ServerResponse): AbortSignal {
  const controller = new AbortController();
  res.on("close", () => {
    if (!res.writableFinished) controller.abort();
  });
  return controller.signal;
}
