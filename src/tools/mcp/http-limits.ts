// An MCP server over HTTP answers in a JSON body or an SSE stream, and the MCP client reads either whole before
// anything looks at it: a server that sends a body of hundreds of MiB has it all in Brain's memory (and then in
// the session's log). On stdio the SDK stops at 10 MiB a message; the fetch given to the HTTP transports holds
// them to the same: a JSON body, or one SSE event, past the limit fails its request instead of being read on.

/** The most one message from a server may take, as on stdio (the SDK's line limit). */
export const MAX_HTTP_MESSAGE_BYTES = 10 * 1024 * 1024;

const LF = 0x0a;
const CR = 0x0d;

/**
 * The most of a refusal's body (a status that is not 2xx) Brain reads: the transport reads it whole and puts it
 * in its error, which becomes a call's error result or a `tool.service` event in the session's log.
 */
export const MAX_REFUSAL_BYTES = 4096;

/** Statuses whose response has no body (a Response cannot be made with one). */
const NO_BODY = new Set([101, 103, 204, 205, 304]);

/**
 * A fetch whose successful responses' bodies fail past `max` bytes a message, and whose refusals' bodies are cut
 * at `refusal` bytes.
 */
export function limitedFetch(
  max = MAX_HTTP_MESSAGE_BYTES,
  base: typeof fetch = fetch,
  refusal = MAX_REFUSAL_BYTES,
): typeof fetch {
  return async (input, init) => {
    const response = await base(input, init);
    if (!response.body || NO_BODY.has(response.status)) return response;
    let body: ReadableStream<Uint8Array>;
    // A redirect or refusal is read by the transport as it is (status, headers, a text): only its length is cut.
    if (!response.ok) body = response.body.pipeThrough(cutAt(refusal));
    else {
      const stream = (response.headers.get("content-type") ?? "").includes("text/event-stream");
      body = response.body.pipeThrough(stream ? eventLimit(max) : totalLimit(max));
    }
    return new Response(body, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}

/** The first `max` bytes, and a word that the rest was left unread (the server's stream is cancelled). */
function cutAt(max: number): TransformStream<Uint8Array, Uint8Array> {
  let seen = 0;
  return new TransformStream({
    transform(chunk, controller) {
      if (seen + chunk.byteLength <= max) {
        seen += chunk.byteLength;
        return controller.enqueue(chunk);
      }
      controller.enqueue(chunk.subarray(0, max - seen));
      controller.enqueue(new TextEncoder().encode(` [… cut at ${max} bytes]`));
      controller.terminate();
    },
  });
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
