// What Brain reads of one provider response, capped. The AI SDK buffers a stream line until its newline (and
// an error page whole), so a broken provider or proxy sending without end, or one line that never ends, grew
// Brain's memory past anything MAX_ANSWER_CHARS bounds: that counts only the parts the SDK has parsed.
import { OversizeAnswerError } from "./step.js";

/**
 * Bytes one response may hold. The longest answers a model writes (128 K output tokens) stream as some tens of
 * MiB of events (OpenAI Responses' are about 200 bytes per token); a response past this is no model's.
 */
export const MAX_ANSWER_BYTES = 128 * 2 ** 20;

export function withBoundedAnswers(fetch: typeof globalThis.fetch): typeof globalThis.fetch {
  return async (input, init) => {
    const response = await fetch(input, init);
    if (response.body === null) return response;
    let read = 0;
    const bounded = new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        read += chunk.byteLength;
        if (read <= MAX_ANSWER_BYTES) return controller.enqueue(chunk);
        controller.error(
          new OversizeAnswerError(
            `sent over ${MAX_ANSWER_BYTES / 2 ** 20} MiB in one response, more than any model's answer; stopped (check the provider, or the proxy at its base URL)`,
          ),
        );
      },
    });
    const { status, statusText, headers } = response;
    return new Response(response.body.pipeThrough(bounded), { status, statusText, headers });
  };
}
