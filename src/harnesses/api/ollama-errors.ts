// Ollama ends a stream that fails after its 200 with a line holding only `{"error": "…"}` (a model runner that
// crashed or ran out of memory). Its AI SDK package drops a line it cannot parse, printing it to the console, and the
// turn failed as a stream cut short, without Ollama's word for why. This fetch takes that line out of the body and
// keeps its message for the step, which sees the stream end unfinished and reports the message instead.

import { JSONParseError } from "ai";

/** A partial line longer than this is passed on as it comes: an error line is short. */
const MAX_HELD = 64 * 1024;

/**
 * Ollama's message when `line` is its error line. A line that is not JSON throws: the package would drop it with a
 * console warning and take the answer without it for whole (a piece of its text lost, unsaid), where the other
 * providers' packages fail the stream on an event they cannot parse.
 */
function errorOf(line: string): string | undefined {
  if (line.trim() === "") return undefined;
  let parsed: { error?: unknown };
  try {
    parsed = JSON.parse(line) as { error?: unknown };
  } catch (cause) {
    throw new JSONParseError({ text: line, cause });
  }
  return typeof parsed?.error === "string" ? parsed.error : undefined;
}

/** One per model: its requests run one at a time (the turn loop's), so the last response's error is the one. */
export class StreamErrorLines {
  private said: string | undefined;

  /** The message of the last response's error line, if it had one. */
  last(): string | undefined {
    return this.said;
  }

  wrap(fetch: typeof globalThis.fetch): typeof globalThis.fetch {
    return async (input, init) => {
      this.said = undefined;
      const response = await fetch(input, init);
      if (!response.ok || response.body === null) return response;
      const { status, statusText, headers } = response;
      return new Response(response.body.pipeThrough(this.lines()), { status, statusText, headers });
    };
  }

  /** Passes every line on whole (the SDK reads whole lines only) but the error line. */
  private lines(): TransformStream<Uint8Array, Uint8Array> {
    const decoder = new TextDecoder();
    const encoder = new TextEncoder();
    let held = "";
    // Within a line already passed on in part: its rest is passed on too.
    let passing = false;
    const take = (line: string): string => {
      const said = passing ? undefined : errorOf(line);
      passing = false;
      if (said === undefined) return `${line}\n`;
      this.said = said;
      return "";
    };
    return new TransformStream({
      transform(chunk, controller) {
        const lines = (held + decoder.decode(chunk, { stream: true })).split("\n");
        held = lines.pop() ?? "";
        let out = "";
        try {
          out = lines.map(take).join("");
        } catch (err) {
          controller.error(err);
          return;
        }
        if (held.length > MAX_HELD) {
          out += held;
          held = "";
          passing = true;
        }
        if (out !== "") controller.enqueue(encoder.encode(out));
      },
      flush(controller) {
        const rest = held + decoder.decode();
        if (rest === "") return;
        try {
          const out = take(rest);
          if (out !== "") controller.enqueue(encoder.encode(out.slice(0, -1)));
        } catch (err) {
          controller.error(err);
        }
      },
    });
  }
}
