// A fetch answer's body, read up to a limit: a server that answers with gigabytes, or without end, has Brain hold
// at most `max` bytes of it; the rest is never read (the body is cancelled, which closes the connection).

/**
 * The most Brain reads of an agent's JSON answer (an HTTP agent's /info, /checkpoint, /verify; opencode's API):
 * far above a real one (a file list, a session), and a bound on what a server answering without end makes Brain
 * hold.
 */
export const MAX_ANSWER_BYTES = 10 << 20;

export interface ResponseText {
  text: string;
  /** The body went on past `max`: `text` is its first `max` bytes. */
  over: boolean;
}

/** Throws what reading throws (a broken connection, the request's abort). */
export async function responseText(response: Response, max: number): Promise<ResponseText> {
  if (!response.body) return { text: "", over: false };
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return { text: decode(chunks), over: false };
      if (size + value.byteLength > max) {
        chunks.push(value.subarray(0, max - size));
        return { text: decode(chunks), over: true };
      }
      chunks.push(value);
      size += value.byteLength;
    }
  } finally {
    reader.cancel().catch(() => {});
  }
}

function decode(chunks: Uint8Array[]): string {
  return Buffer.concat(chunks).toString("utf8");
}
