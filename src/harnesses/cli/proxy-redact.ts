// What the credential proxy (./credential-proxy.ts) sends back to the agent never holds the provider's key. A
// provider's or a gateway's answer can quote it: an error body naming the key it refused, a gateway echoing the
// request's headers into its body or its own headers. The agent, and any prompt-injected tool it runs, reads that
// answer, so the key would be out of the host after all. Bodies are redacted as they stream (SSE, chunked): a key
// split over two chunks is caught by holding back the tail that could be its start, as the session's log does for
// deltas (../../core/redacting-log.ts).
import { Transform } from "node:stream";
import { createBrotliDecompress, createGunzip, createInflate } from "node:zlib";
import { MIN_SECRET_LENGTH, type Redactor, type Secret } from "../../core/redact.js";

/**
 * A body's bytes as text one byte a character (latin1): every byte comes back out as it went in, so a binary or
 * UTF-8 body passes unchanged where it holds no key. A key is ASCII, so it reads the same in latin1 as in UTF-8.
 */
const BYTES = "latin1";

/**
 * The key as an answer can carry it, each named api_key: itself (the Redactor adds its JSON-escaped form), with its
 * `/` escaped as PHP's json_encode writes it, and the forms a gateway echoing the request writes it in. Each is as
 * long and as random as the key, so none matches text that does not hold it. Left alone: a provider's own masked
 * echo ("sk-proj-****…wxyz", OpenAI's 401), whose prefix is the key's public kind and whose last four characters
 * are what the provider's console shows of every key; and any cut of the key shorter than it, which, without the
 * provider's mask to find it by, is ordinary text.
 */
export function keyForms(key: string): Secret[] {
  // A key too short to be told from ordinary text (a local gateway's "ollama") is not redacted in any form.
  if (key.length < MIN_SECRET_LENGTH) return [];
  const forms = new Set([key, key.replaceAll("/", "\\/")]);
  // In a URL or a form: a key with `+`, `/` or `=` (a base64 gateway key) is percent-encoded, in either case.
  for (const encoded of [encodeURIComponent(key), new URLSearchParams({ k: key }).toString().slice(2)]) {
    forms.add(encoded);
    forms.add(encoded.replace(/%[0-9A-F]{2}/g, (hex) => hex.toLowerCase()));
  }
  for (const encoded of base64Cores(Buffer.from(key))) {
    forms.add(encoded);
    forms.add(encoded.replaceAll("+", "-").replaceAll("/", "_"));
  }
  return [...forms].map((value) => ({ name: "api_key", value }));
}

/**
 * The characters base64 writes for `bytes` wherever they fall in what it encodes (a Basic credential's
 * `user:key`, a gateway's encoded echo of the request): one per offset modulo 3, each without the characters at
 * its ends that take bits from the bytes on either side.
 */
function base64Cores(bytes: Buffer): string[] {
  return [0, 1, 2].map((offset) => {
    const encoded = Buffer.concat([Buffer.alloc(offset), bytes])
      .toString("base64")
      .replace(/=+$/, "");
    const first = Math.ceil((offset * 8) / 6);
    const end = Math.floor(((offset + bytes.length) * 8) / 6);
    return encoded.slice(first, end);
  });
}

/** `redactor`'s secrets replaced in a body as it streams through. */
export function redactingBody(redactor: Redactor): Transform {
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
  redactor: Redactor,
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
