// Whether a string goes into JSON as it is. Where a line is written by hand around a string, this says whether
// `"` + s + `"` is exactly JSON.stringify(s): no quote, backslash or control character, and no surrogate (a
// lone one is escaped by JSON.stringify; a pair would be written as is, but is rare enough to leave to it).

const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

/** True when JSON.stringify(s) is s in quotes (some strings it writes unescaped are still said false). */
export function isPlainJsonString(s: string): boolean {
  return !NEEDS_ESCAPE.test(s);
}
