// An MCP server over HTTP answers in a JSON body or an SSE stream, and the MCP client reads either whole before
// anything looks at it: a server that sends a body of hundreds of MiB has it all in Brain's memory (and then in
// the session's log). On stdio the SDK stops at 10 MiB a message; the fetch given to the HTTP transports holds
// them to the same: a JSON body, or one SSE event, past the limit fails its request instead of being read on.

/** The most one message from a server may take, as on stdio (the SDK's line limit). */
export const MAX_HTTP_MESSAGE_BYTES = 10 * 1024 * 1024;

const LF = 0x0a;
const CR = 0x0d;

/** A fetch whose successful responses' bodies fail past `max` bytes a message. */
export function limitedFetch(max = MAX_HTTP_MESSAGE_BYTES, base: typeof fetch = fetch): typeof fetch {
  return async (input, init) => {
    const response = await base(input, init);
    // Redirects and refusals are read by the transport as they are (status, headers, a short text).
    if (!response.ok || !response.body) return response;
    const stream = (response.headers.get("content-type") ?? "").includes("text/event-stream");
    const body = response.body.pipeThrough(stream ? eventLimit(max) : totalLimit(max));
    return new Response(body, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}

const tooLarge = (max: number, what: string) =>
  new Error(`the server sent ${what} over ${max / 1024 / 1024} MiB, more than Brain reads as one message`);

function totalLimit(max: number): TransformStream<Uint8Array, Uint8Array> {
  let seen = 0;
  return new TransformStream({
    transform(chunk, controller) {
      seen += chunk.byteLength;
      if (seen > max) controller.error(tooLarge(max, "a response"));
      else controller.enqueue(chunk);
    },
  });
}

/** Counts the bytes of the SSE event under way (since the last blank line), across chunks. */
function eventLimit(max: number): TransformStream<Uint8Array, Uint8Array> {
  let inEvent = 0;
  let atLineStart = true;
  let previous = -1;
  return new TransformStream({
    transform(chunk, controller) {
      for (const byte of chunk) {
        if (byte === LF && previous === CR) {
          previous = byte;
          continue;
        }
        previous = byte;
        if (byte === LF || byte === CR) {
          if (atLineStart) inEvent = 0;
          atLineStart = true;
        } else {
          atLineStart = false;
          // Checked byte by byte: the event's end may come later in the same chunk.
          if (++inEvent > max) return controller.error(tooLarge(max, "an event"));
        }
      }
      controller.enqueue(chunk);
    },
  });
}
