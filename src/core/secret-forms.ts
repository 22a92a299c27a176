// The forms a secret takes in text that carries it encoded. An agent's tool that prints the key base64'd (`echo -n
// $KEY | base64`), a curl -v line with it in a query string, a gateway echoing a Basic credential, PHP's JSON: each
// shows the secret without its plain value. One derivation for everything that keeps secrets out: the session log's
// Redactor (./redact.ts, and through it the credential proxy's answers) and the checkpoint secret scan
// (./checkpoints/secret-scan.ts).

/** Shorter values would match ordinary text ("1", "true", a port), so they are never treated as secrets. */
export const MIN_SECRET_LENGTH = 8;

/** How a form writes the secret. */
export type SecretEncoding = "slash-escaped" | "URL" | "base64";

export interface SecretForm {
  text: string;
  encoding: SecretEncoding;
}

/**
 * The secret as text may carry it other than as itself: with its `/` escaped as PHP's json_encode writes it; in a
 * URL or a form (encodeURIComponent, Python's quote, which keeps `/`, and application/x-www-form-urlencoded), in
 * upper- or lower-case hex; and base64 (standard and URL-safe) wherever it falls in what is encoded. Each is as long
 * and as random as the secret, so none matches text that does not hold it. None for a value shorter than
 * MIN_SECRET_LENGTH, which is not redacted in any form; none that is the value itself (which has no `/`, nothing to
 * percent-encode).
 */
export function encodedForms(secret: string): SecretForm[] {
  if (secret.length < MIN_SECRET_LENGTH) return [];
  const forms = new Map<string, SecretEncoding>([[secret.replaceAll("/", "\\/"), "slash-escaped"]]);
  for (const encoded of percentEncodings(secret)) {
    forms.set(encoded, "URL");
    forms.set(
      encoded.replace(/%[0-9A-F]{2}/g, (hex) => hex.toLowerCase()),
      "URL",
    );
  }
  for (const core of base64Cores(Buffer.from(secret))) {
    forms.set(core, "base64");
    forms.set(core.replaceAll("+", "-").replaceAll("/", "_"), "base64");
  }
  forms.delete(secret);
  return [...forms].map(([text, encoding]) => ({ text, encoding }));
}

/** The percent-encodings URLs and forms write; none for a value with a lone surrogate, which none of them can. */
function percentEncodings(secret: string): string[] {
  let component: string;
  try {
    component = encodeURIComponent(secret);
  } catch {
    return [];
  }
  const python = component
    .replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
    .replaceAll("%2F", "/");
  return [component, python, new URLSearchParams({ k: secret }).toString().slice(2)];
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
