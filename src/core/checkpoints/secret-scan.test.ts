import { describe, expect, it } from "vitest";
import { SecretScanner } from "./secret-scan.js";

const KEY = "sk-B64/key+0123456789/é";
const uEscaped = (text: string) =>
  [...text].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`).join("");

function scan(data: Buffer, chunk: number) {
  const scanner = new SecretScanner([Buffer.from(KEY)]);
  for (let pos = 0; pos < data.length; pos += chunk) scanner.push(data.subarray(pos, pos + chunk), pos);
  scanner.end();
  return scanner.hit;
}

describe("SecretScanner", () => {
  // Where a decoded byte came from is noted only now and then and found by decoding again: many escapes of every
  // kind (one-character, non-ASCII, cut by a chunk's end) come before the key, so that finding goes a long way.
  const noise = JSON.stringify({ out: `a\n"b"\t\\ é 😀 \\u ${"x".repeat(40)}\n`.repeat(50) });
  it.each([
    ["escaped once", (text: string) => `{"key":"${uEscaped(text)}"}`],
    ["escaped twice", (text: string) => JSON.stringify({ content: `{"key":"${uEscaped(text)}"}` })],
    [
      "slash-escaped twice",
      (text: string) => JSON.stringify({ c: `{"k":"${text.replaceAll("/", "\\/")}"}` }),
    ],
  ])("names where a key %s starts after many other escapes, in any chunk size", (_, write) => {
    // Binary bytes first: backslashes in plenty, few of them escapes.
    const binary = Buffer.from(Array.from({ length: 50_000 }, (_, i) => (i % 3 ? 0x5c : (i * 37) % 256)));
    const before = `\n${noise}\n${JSON.stringify({ content: noise })}\n`.repeat(40);
    const data = Buffer.concat([binary, Buffer.from(`${before}${write(KEY)}\n${noise}`)]);
    const written = write(KEY);
    const first = written.indexOf(written.includes("u0073") ? "u0073" : "sk-");
    let start = binary.length + Buffer.byteLength(before) + first;
    while (data[start - 1] === 0x5c) start--;
    for (const chunk of [1 << 20, 4096, 333, 7]) {
      expect(scan(data, chunk)).toEqual({ index: 0, offset: start, escaped: true });
    }
  });

  it("finds nothing in escapes that hold no key", () => {
    const data = Buffer.from(`${noise}\n${JSON.stringify({ content: noise })}\n`.repeat(40));
    for (const chunk of [1 << 20, 4096, 7]) expect(scan(data, chunk)).toBeUndefined();
  });
});
