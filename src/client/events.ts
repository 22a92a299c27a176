// Follows a session's SSE stream for as long as the caller wants: every event once, in seq order, across
// dropped connections and daemon restarts (it reconnects with Last-Event-ID = the last seq it yielded).
import { sleep } from "../core/sleep.js";
import type { SessionEvent } from "../protocol/events.js";
import { readSse } from "../protocol/sse.js";
import type { BrainClient } from "./client.js";
import { ClientError, fetchAnswered, unansweredMessage } from "./errors.js";

export interface EventStreamOptions {
  /** Yield events with seq greater than this (default 0: the whole log). */
  after?: number;
  signal?: AbortSignal;
  /** Wait between reconnects; default the server's `retry:` (1 s). */
  retryMs?: number;
  /**
   * Back off: each failed reconnect in a row waits twice as long as the one before, up to this (a daemon down for
   * minutes is not asked every second). Unset: every wait is retryMs.
   */
  maxRetryMs?: number;
  /**
   * A stream that brings nothing, not even the daemon's heartbeat comment (every 15 s), for this long is taken as
   * dropped and reconnected (default SILENCE_MS): a daemon that hangs (SIGSTOP, a wedged host) keeps its
   * connections open, and a stream waiting on one would wait for ever.
   */
  silenceMs?: number;
  /** "observer" watches without keeping the client's control lease alive. */
  role?: "observer";
  /**
   * Told each time the stream drops and a reconnect is about to be tried. `error`: the daemon's own (status > 0)
   * when it answered the reconnect with one (a 5xx); a timeout's (status 0, code "timeout") when it took the
   * connection and answered nothing; undefined when the connection itself failed or broke.
   */
  onDrop?(lastSeq: number, reason: string, error?: ClientError): void;
  /** Told as each reconnect after onDrop is sent (its answer, or onDrop again, follows). */
  onRetry?(): void;
  /** Told when the stream is open again after onDrop. */
  onReconnect?(lastSeq: number): void;
  /**
   * Told when the cursor was before the first seq the log still holds: retention archived or dropped the
   * events in between, and the stream goes on from `firstSeq`.
   */
  onDroppedRange?(after: number, firstSeq: number): void;
}

/** Three of the daemon's heartbeats (server/sse/watchers.ts HEARTBEAT_MS) missed in a row. */
export const SILENCE_MS = 45_000;

export async function* streamEvents(
  client: BrainClient,
  id: string,
  options: EventStreamOptions = {},
): AsyncGenerator<SessionEvent> {
  const signal = options.signal ?? new AbortController().signal;
  let last = options.after ?? 0;
  let retryMs = options.retryMs ?? 1000;
  let failedInARow = 0;
  const pause = () => {
    const max = options.maxRetryMs ?? retryMs;
    const ms = Math.min(retryMs * 2 ** Math.min(failedInARow, 30), Math.max(max, retryMs));
    failedInARow += 1;
    return sleep(ms, signal);
  };
  const role = options.role ? `?role=${options.role}` : "";
  const path = `/v1/sessions/${encodeURIComponent(id)}/events${role}`;
  const url = `${client.url}${path}`;
  while (!signal.aborted) {
    // Each reconnect asks the client's guard again: the daemon may have gone and another process taken its port.
    const headers = client.headers({ accept: "text/event-stream", "last-event-id": String(last) });
    let res: Response;
    if (failedInARow > 0) options.onRetry?.();
    // This connection's own abort, for silence; the caller's signal ends the whole stream.
    const connection = new AbortController();
    try {
      const both = AbortSignal.any([signal, connection.signal]);
      res = await fetchAnswered(url, { headers, signal: both }, client.options.answerTimeoutMs, (seconds) =>
        unansweredMessage(client.url, `GET ${path}`, seconds),
      );
    } catch (err) {
      if (signal.aborted) return;
      // A daemon that answers nothing may be restarting: said, and tried again, as one that refuses.
      const why =
        err instanceof ClientError
          ? err.message
          : ((err as { cause?: Error }).cause?.message ?? (err as Error).message);
      options.onDrop?.(last, `cannot connect: ${why}`, err instanceof ClientError ? err : undefined);
      await pause();
      continue;
    }
    if (!res.ok || !res.body) {
      const error = client.refusal(res.status, await res.text());
      if (res.status >= 400 && res.status < 500) throw error;
      options.onDrop?.(last, error.message, error);
      await pause();
      continue;
    }
    const type = res.headers.get("content-type") ?? "no Content-Type";
    if (!type.toLowerCase().startsWith("text/event-stream")) {
      // Another server on the port: what it sent holds no event, and reconnecting would get the same for ever.
      await res.body.cancel().catch(() => {});
      throw new ClientError(
        res.status,
        "bad_response",
        `${client.url} answered GET ${path} with ${type.slice(0, 100)}, not an event stream: is it the address of \`brain serve\`?`,
      );
    }
    if (failedInARow > 0) options.onReconnect?.(last);
    failedInARow = 0;
    const onRetry = (ms: number) => {
      if (options.retryMs === undefined) retryMs = ms;
    };
    let reason = "the daemon ended the stream";
    const silence = new SilenceWatch(options.silenceMs ?? SILENCE_MS, () => connection.abort());
    try {
      for await (const message of readSse(silence.watch(res.body), { onRetry })) {
        if (message.event === "dropped") {
          const { first_seq } = JSON.parse(message.data) as { first_seq: number };
          options.onDroppedRange?.(last, first_seq);
          continue;
        }
        let event: SessionEvent;
        try {
          event = JSON.parse(message.data) as SessionEvent;
        } catch (err) {
          throw new ClientError(
            0,
            "bad_stream",
            `the daemon sent an event that is not JSON: ${(err as Error).message}`,
          );
        }
        if (event.seq <= last) continue; // already yielded before a reconnect
        last = event.seq;
        yield event;
      }
    } catch (err) {
      if (signal.aborted) return;
      if (err instanceof ClientError) throw err;
      reason = silence.fired
        ? `the daemon sent nothing, not even its heartbeat, for ${silence.ms / 1000} s`
        : `the connection broke: ${(err as Error).message}`;
    } finally {
      silence.stop();
    }
    if (signal.aborted) return;
    options.onDrop?.(last, reason);
    await pause();
  }
}

/** Calls `onSilent` once when a body brings no bytes for `ms` (each chunk, a heartbeat comment too, starts it again). */
class SilenceWatch {
  fired = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    readonly ms: number,
    private readonly onSilent: () => void,
  ) {}

  watch(body: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
    this.restart();
    const restart = () => this.restart();
    return body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, out) {
          restart();
          out.enqueue(chunk);
        },
      }),
    );
  }

  stop(): void {
    clearTimeout(this.timer);
  }

  private restart(): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.fired = true;
      this.onSilent();
    }, this.ms);
  }
}
