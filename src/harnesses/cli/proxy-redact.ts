// What the credential proxy (./credential-proxy.ts) sends back to the agent never holds the provider's key. A
// provider's or a gateway's answer can quote it: an error body naming the key it refused, a gateway echoing the
// request's headers into its body or its own headers. The agent, and any prompt-injected tool it runs, reads that
// answer, so the key would be out of the host after all. Bodies are redacted as they stream (SSE, chunked): a key
// split over two chunks is caught by holding back the tail that could be its start, as the session's log does for
// deltas (../../core/redacting-log.ts). The Redactor knows the key's forms a gateway echoes it in (URL-encoded,
// base64'd, `/` escaped: ../../core/secret-forms.ts); ./masked-echo.ts, the provider's own masked echo of it
// ("sk-proj-****…wxyz", OpenAI's 401), which shows its first and last characters. Left alone: any cut of the key
// shorter than it without a mask to find it by, which is ordinary text.
import { Transform } from "node:stream";
import { createBrotliDecompress, createGunzip, createInflate } from "node:zlib";
import type { AnswerRedactor } from "./masked-echo.js";

/**
 * A body's bytes as text one byte a character (latin1): every byte comes back out as it went in, so a binary or
 * UTF-8 body passes unchanged where it holds no key. A key is ASCII, so it reads the same in latin1 as in UTF-8.
 */
const BYTES = "latin1";

/** `redactor`'s secrets replaced in a body as it streams through. */
export function redactingBody(redactor: AnswerRedactor): Transform {
  let held = "";
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      const text = redactor.redact(held + chunk.toString(BYTES));
      const hold = redactor.pendingTail(text);
      held = text.slice(text.length - hold);
      done(null, hold === text.length ? undefined : Buffer.from(text.slice(0, text.length - hold), BYTES));
    },
    flush(done) {
      done(null, held === "" ? undefined : Buffer.from(held, BYTES));
    },
  });
}

/** Every header value with `redactor`'s secrets replaced. */
export function redactedHeaders(
  headers: Record<string, string | string[] | undefined>,
  redactor: AnswerRedactor,
): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    out[name] = Array.isArray(value) ? value.map((one) => redactor.redact(one)) : redactor.redact(value);
  }
  return out;
}

/**
 * A decoder for a body the provider compressed although the proxy asked for none (`accept-encoding: identity`):
 * a compressed key is no text a redactor can find. Null for identity; undefined for an encoding Node cannot decode
 * (zstd on Node 20), which the proxy refuses to pass on unread.
 */
export function decoderOf(encoding: string | undefined): Transform | null | undefined {
  const name = (encoding ?? "").trim().toLowerCase();
  if (name === "" || name === "identity") return null;
  if (name === "gzip" || name === "x-gzip") return createGunzip();
  if (name === "deflate") return createInflate();
  if (name === "br") return createBrotliDecompress();
  return undefined;
}
