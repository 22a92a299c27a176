// Anthropic's package reads a stream's first event before it hands the stream on, and one it cannot read there (an
// event type newer than the package: Anthropic adds them within one API version and asks clients to ignore the ones
// they do not know) it throws as the request's failure, the stream gone before the step could pass over it as it
// passes over such an event later (step.ts, unknownEventType). This fetch takes the events of a type Anthropic's
// Messages stream does not have out of the stream before its first event the package reads, keeping their types for
// the step to warn of; from that event on, the stream is passed on as it comes.

/** The event types of Anthropic's Messages stream, all of which its package reads. */
const KNOWN = new Set([
  "message_start",
  "message_delta",
  "message_stop",
  "content_block_start",
  "content_block_delta",
  "content_block_stop",
  "ping",
  "error",
]);

/**
 * Past this much held or taken out before the first event, the stream is passed on as it comes (and the package
 * fails on what it cannot read, as before): a first event is short, and a stream of nothing but unknown events
 * must not grow Brain's memory.
 */
const MAX_HELD = 64 * 1024;

/** What an event's data says its type is: undefined with no data (a comment), null when it names none. */
function typeOf(event: string): string | null | undefined {
  const data = event
    .split("\n")
    .filter((line) => line.startsWith("data:"))
    .map((line) => line.slice(line.startsWith("data: ") ? 6 : 5));
  if (data.length === 0) return undefined;
  try {
    const type = (JSON.parse(data.join("\n")) as { type?: unknown } | null)?.type;
    return typeof type === "string" ? type : null;
  } catch {
    return null;
  }
}

/** One per model: its requests run one at a time (the turn loop's), so the last response's events are the ones. */
export class UnknownFirstEvents {
  private skipped: string[] = [];

  /** The types taken out of the last response's stream since the last take. */
  take(): string[] {
    return this.skipped.splice(0);
  }

  wrap(fetch: typeof globalThis.fetch): typeof globalThis.fetch {
    return async (input, init) => {
      this.skipped = [];
      const response = await fetch(input, init);
      if (!response.ok || response.body === null) return response;
      if (!response.headers.get("content-type")?.includes("text/event-stream")) return response;
      const { status, statusText, headers } = response;
      return new Response(response.body.pipeThrough(this.sifted()), { status, statusText, headers });
    };
  }

  private sifted(): TransformStream<Uint8Array, Uint8Array> {
    const decoder = new TextDecoder();
    const encoder = new TextEncoder();
    const skipped = this.skipped;
    let held = "";
    let taken = 0;
    let sifting = true;
    // Whole events up to the first the package reads, line ends as "\n" (SSE's "\r\n" and "\r" are the same to it).
    const sift = (): string => {
      // A "\r" last may be the first half of a "\r\n".
      const cr = held.endsWith("\r") ? "\r" : "";
      let rest = held.slice(0, held.length - cr.length).replace(/\r\n?/g, "\n");
      let out = "";
      for (let end = rest.indexOf("\n\n"); sifting && end !== -1; end = rest.indexOf("\n\n")) {
        const event = rest.slice(0, end + 2);
        rest = rest.slice(end + 2);
        const type = typeOf(event);
        if (typeof type === "string" && !KNOWN.has(type)) {
          skipped.push(type.length > 100 ? `${type.slice(0, 100)}… (${type.length} characters)` : type);
          taken += event.length;
          continue;
        }
        out += event;
        // A comment or a ping the package passes over; anything else is its first event (or its failure, as before).
        if (type !== undefined && type !== "ping") sifting = false;
      }
      held = rest + cr;
      if (!sifting || held.length + taken > MAX_HELD) {
        sifting = false;
        out += held;
        held = "";
      }
      return out;
    };
    return new TransformStream({
      transform(chunk, controller) {
        const text = decoder.decode(chunk, { stream: true });
        if (!sifting) {
          if (text !== "") controller.enqueue(encoder.encode(text));
          return;
        }
        held += text;
        const out = sift();
        if (out !== "") controller.enqueue(encoder.encode(out));
      },
      flush(controller) {
        const rest = held + decoder.decode();
        if (rest !== "") controller.enqueue(encoder.encode(rest));
      },
    });
  }
}
