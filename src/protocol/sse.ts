// Reading a text/event-stream body: the one SSE client, shared by the daemon's client (src/client) and the
// harnesses that read SSE (nui's HTTP agents, opencode's server). A real parser (eventsource-parser): events may
// span chunks and carry several `data:` lines, comments and ids.
import { createParser, type EventSourceMessage } from "eventsource-parser";

export type { EventSourceMessage };

export interface SseOptions {
  /** The server's `retry:` field. */
  onRetry?(ms: number): void;
  /**
   * A `data:` line whose value is a whole JSON object ends its event, blank line or not. nui's Go client reads
   * each `data:` line as an event of its own, so agents written for it may leave out the blank line between
   * events; a standard parser would join their lines into one event that is not JSON (or hold them until the
   * stream ends, and drop them). Events that span several `data:` lines still join: a line that is only part
   * of an object does not parse alone, and two objects joined by a newline are not JSON either.
   */
  dataLineEndsJsonEvent?: boolean;
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
  const lines = options.dataLineEndsJsonEvent ? endJsonDataLines((text) => parser.feed(text)) : undefined;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) {
        lines?.end();
        while (ready.length > 0) yield ready.shift()!;
        break;
      }
      const text = decoder.decode(value, { stream: true });
      if (lines) lines.feed(text);
      else parser.feed(text);
      while (ready.length > 0) yield ready.shift()!;
    }
  } finally {
    reader.cancel().catch(() => {});
  }
}

/**
 * Passes text on to `feed` with a blank line after each `data:` line whose value parses as a JSON object (a
 * blank line more where the server sends one is nothing: the parser dispatches an event only when it holds
 * data). `end` passes on a last line the stream did not end with a newline, as nui's line reader takes it.
 */
function endJsonDataLines(feed: (text: string) => void): { feed(text: string): void; end(): void } {
  let partial = "";
  const lineEnd = /\r\n|\r|\n/g;
  const endsEvent = (line: string) =>
    line.startsWith("data:") && isJsonObject(line.slice(line[5] === " " ? 6 : 5));
  return {
    feed(text) {
      // Only the new text can hold a line end (the partial had none), but a CR the partial ended with may be
      // the first half of a CRLF: scan from the partial's last character.
      const all = partial + text;
      lineEnd.lastIndex = Math.max(0, partial.length - 1);
      let start = 0;
      let out = "";
      for (let m = lineEnd.exec(all); m !== null; m = lineEnd.exec(all)) {
        if (m[0] === "\r" && m.index === all.length - 1) break; // wait: it may be a CRLF
        const line = all.slice(start, m.index);
        // The blank line in the line's own ending: a LF after its CR would make one CRLF of them.
        out += all.slice(start, m.index + m[0].length) + (endsEvent(line) ? m[0] : "");
        start = m.index + m[0].length;
      }
      partial = all.slice(start);
      if (out) feed(out);
    },
    end() {
      if (partial && endsEvent(partial)) feed(`${partial}\n\n`);
      partial = "";
    },
  };
}

function isJsonObject(value: string): boolean {
  const text = value.trim();
  if (!text.startsWith("{") || !text.endsWith("}")) return false;
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}
