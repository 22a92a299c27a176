// Reading a text/event-stream body: the one SSE client, shared by the daemon's client (src/client) and the
// harnesses that read SSE (nui's HTTP agents, opencode's server). A real parser (eventsource-parser): events may
// span chunks and carry several `data:` lines, comments and ids. Lines are split here, and the parser is fed
// whole lines only: it re-reads an unfinished line with each chunk, which made one long line cost its length
// squared.
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
  /** The longest event taken, in characters (its lines together); a longer one ends the stream with an error. */
  maxEventChars?: number;
  /**
   * The body ended inside an event (a line, or lines, with no end): `head` is its start. Such an event is not
   * dispatched, as the SSE standard says; this tells the reader that one was lost, not that none came.
   */
  onCutOff?(head: string): void;
}

/**
 * Far above any event Brain writes or an agent sends (a message with its text, a base64 image), and a bound on
 * what one server can make the reader hold.
 */
export const MAX_SSE_EVENT_CHARS = 64 << 20;

/** Of an event the body ended inside, the characters given to `onCutOff`. */
const CUT_HEAD_CHARS = 200;

/**
 * Yields each event of `body` in order until the body ends. Throws what reading throws (a broken connection), and
 * an error naming the limit for an event over `maxEventChars`. Leaving the loop early (break, return, a throw)
 * cancels the body: some servers keep it open after the end.
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
  const lines = new SseLines((text) => parser.feed(text), options);
  const reader = body.getReader();
  const decoder = new TextDecoder();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) {
        const cut = lines.end();
        if (cut !== undefined) options.onCutOff?.(cut);
      } else lines.feed(decoder.decode(value, { stream: true }));
      while (ready.length > 0) yield ready.shift()!;
      if (done) break;
    }
  } finally {
    reader.cancel().catch(() => {});
  }
}

/**
 * Splits text into lines and passes whole lines on, each ended by "\n" (CR, LF and CRLF all end a line in SSE).
 * With `dataLineEndsJsonEvent`, a blank line follows each `data:` line whose value parses as a JSON object (a
 * blank line more where the server sends one is nothing: the parser dispatches an event only when it holds
 * data), and `end` passes on such a line the stream did not end with a newline, as nui's line reader takes it.
 */
class SseLines {
  /** The unfinished line, in the pieces it came in: joined once, when its end comes. */
  private readonly pieces: string[] = [];
  private pieceChars = 0;
  /** Characters of the event so far (its finished lines). */
  private eventChars = 0;
  /** The first `data` line of the event so far, cut to its head. */
  private eventHead = "";
  /** The last text ended with a CR: a LF first in the next is the rest of that CRLF. */
  private skipLf = false;
  private readonly lineEnd = /\r\n|\r|\n/g;
  private readonly max: number;
  private readonly endJson: boolean;

  constructor(
    private readonly pass: (lines: string) => void,
    options: SseOptions,
  ) {
    this.max = options.maxEventChars ?? MAX_SSE_EVENT_CHARS;
    this.endJson = options.dataLineEndsJsonEvent === true;
  }

  feed(text: string): void {
    if (text === "") return;
    let start = this.skipLf && text.startsWith("\n") ? 1 : 0;
    this.skipLf = false;
    let out = "";
    this.lineEnd.lastIndex = start;
    for (let m = this.lineEnd.exec(text); m !== null; m = this.lineEnd.exec(text)) {
      let line = text.slice(start, m.index);
      if (this.pieces.length > 0) {
        this.pieces.push(line);
        line = this.pieces.join("");
        this.pieces.length = 0;
        this.pieceChars = 0;
      }
      start = m.index + m[0].length;
      if (m[0] === "\r" && start === text.length) this.skipLf = true;
      out += `${line}\n`;
      if (line === "") {
        this.eventChars = 0;
        this.eventHead = "";
      } else if (this.endJson && endsJsonEvent(line)) {
        out += "\n";
        this.eventChars = 0;
        this.eventHead = "";
      } else {
        if (!this.eventHead && line.startsWith("data")) this.eventHead = line.slice(0, CUT_HEAD_CHARS);
        this.count(line.length);
      }
    }
    if (start < text.length) {
      const rest = text.slice(start);
      this.pieces.push(rest);
      this.pieceChars += rest.length;
      this.count(0);
    }
    if (out) this.pass(out);
  }

  /** The start of the event the body ended inside, or undefined when it ended between events. */
  end(): string | undefined {
    const line = this.pieces.join("");
    this.pieces.length = 0;
    if (this.endJson && endsJsonEvent(line)) this.pass(`${line}\n\n`);
    else if (this.eventHead || line.startsWith("data"))
      return (this.eventHead || line).slice(0, CUT_HEAD_CHARS);
    return undefined;
  }

  private count(lineChars: number): void {
    this.eventChars += lineChars;
    if (this.eventChars + this.pieceChars > this.max) {
      throw new Error(
        `an event of more than ${this.max} characters: the stream was cut off there (the limit keeps one server from filling the reader's memory)`,
      );
    }
  }
}

function endsJsonEvent(line: string): boolean {
  return line.startsWith("data:") && isJsonObject(line.slice(line[5] === " " ? 6 : 5));
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
