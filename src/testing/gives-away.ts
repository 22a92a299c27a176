// Whether text gives a secret away to one who decodes it as a tool, a URL or a gateway encoded it: the check the
// tests of every redaction of a secret's encoded forms (../core/secret-forms.ts) make of what got out.

/**
 * Whether `text` gives `secret` (ASCII) away: as it is, percent-encoded, JSON with its `/` escaped, or base64 (or
 * base64url) at any offset.
 */
export function givesAway(text: string, secret: string): boolean {
  const decoded = [
    text,
    text.replaceAll("\\/", "/"),
    text.replace(/%[0-9a-f]{2}/gi, (hex) => String.fromCharCode(Number.parseInt(hex.slice(1), 16))),
  ];
  for (const run of text.match(/[A-Za-z0-9+/_-]+/g) ?? []) {
    const standard = run.replaceAll("-", "+").replaceAll("_", "/");
    for (let at = 0; at < 4; at++) decoded.push(Buffer.from(standard.slice(at), "base64").toString("latin1"));
  }
  return decoded.some((one) => one.includes(secret));
}

/** Every string in a JSON-like value (what a log's events hold once their JSON is read back). */
export function stringsIn(value: unknown): string[] {
  if (typeof value === "string") return [value];
  if (Array.isArray(value)) return value.flatMap(stringsIn);
  if (value !== null && typeof value === "object") return Object.values(value).flatMap(stringsIn);
  return [];
}
