// Reading a text/event-stream body: the one SSE client, shared by the daemon's client (src/client) and the
// harnesses that read SSE (nui's HTTP agents, opencode's server). A real parser (eventsource-parser): events may
// span chunks and carry several `data:` lines, comments and ids.
import { createParser, type EventSourceMessage } from "eventsource-parser";

export type { EventSourceMessage };

export interface SseOptions {
  /** The server's `retry:` field. */
  onRetry?(ms: number): void;
}

/**
 * Yields each event of `body` in order until the body ends. Throws what reading throws (a broken connection).
 * Leaving the loop early (break, return, a throw) cancels the body: some servers keep it open after the end.
 */
export async function* readSse(
  body: ReadableStream<Uint8Array>,
  options: SseOptions = {},
): AsyncGenerator<EventSourceMessage> {
  const ready: EventSourceMessage[] = [];
  const parser = createParser({
    onEvent: (message) => ready.push(message),
    ...(options.onRetry ? { onRetry: options.onRetry } : {}),
  });
  const reader = body.getReader();
  const decoder = new TextDecoder();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      parser.feed(decoder.decode(value, { stream: true }));
      while (ready.length > 0) yield ready.shift()!;
    }
  } finally {
    reader.cancel().catch(() => {});
  }
}
