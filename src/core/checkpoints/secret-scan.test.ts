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

  it.each([
    ["base64 at any alignment", (a: number) => Buffer.from(`${"xyz".slice(0, a)}${KEY}q`).toString("base64")],
    ["URL-safe base64", (a: number) => Buffer.from(`${"xyz".slice(0, a)}${KEY}`).toString("base64url")],
    ["percent-encoded", () => `?token=${encodeURIComponent(KEY)}`],
    [
      "percent-encoded, lower-case hex",
      () => encodeURIComponent(KEY).replace(/%[0-9A-F]{2}/g, (e) => e.toLowerCase()),
    ],
    ["escaped three times", () => JSON.stringify(JSON.stringify(`{"k":"${uEscaped(KEY)}"}`))],
  ])("finds a key written %s", (_, write) => {
    for (const align of [0, 1, 2]) {
      const data = Buffer.from(`${JSON.stringify({ noise })}\n${write(align)}\n`);
      for (const chunk of [1 << 20, 7]) expect(scan(data, chunk)).toMatchObject({ index: 0 });
    }
  });

  it("finds nothing in escapes that hold no key", () => {
    const data = Buffer.from(`${noise}\n${JSON.stringify({ content: noise })}\n`.repeat(40));
    for (const chunk of [1 << 20, 4096, 7]) expect(scan(data, chunk)).toBeUndefined();
  });
});

/** A small seeded generator: the random inputs are the same on every run. */
function random(seed: number) {
  return (n: number) => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return (((t ^ (t >>> 14)) >>> 0) % n) as number;
  };
}

const ESCAPE = /^\\(?:(["\\/bfnrt])|u([0-9a-fA-F]{4})(?:\\u([0-9a-fA-F]{4}))?)/;
const SIMPLE: Record<string, string> = {
  '"': '"',
  "\\": "\\",
  "/": "/",
  b: "\b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
};

/** The slow reference: the whole input decoded at once as JSON string escapes, the origin of every output byte noted. */
function unescapeAll(data: Buffer, origin: number[]): { data: Buffer; origin: number[] } {
  const out: number[] = [];
  const from: number[] = [];
  for (let i = 0; i < data.length; ) {
    const m = data[i] === 0x5c ? ESCAPE.exec(data.toString("latin1", i, i + 12)) : null;
    if (!m) {
      out.push(data[i]!);
      from.push(origin[i++]!);
      continue;
    }
    let text = m[1] !== undefined ? SIMPLE[m[1]]! : String.fromCharCode(Number.parseInt(m[2]!, 16));
    let length = m[0].length;
    const unit = text.charCodeAt(0);
    const low = m[3] === undefined ? -1 : Number.parseInt(m[3], 16);
    if (unit >= 0xd800 && unit < 0xdc00 && low >= 0xdc00 && low < 0xe000) text += String.fromCharCode(low);
    else if (unit >= 0xd800 && unit < 0xe000) text = "\ufffd";
    if (m[1] === undefined && text.length === 1) length = 6;
    for (const byte of Buffer.from(text)) {
      out.push(byte);
      from.push(origin[i]!);
    }
    i += length;
  }
  return { data: Buffer.from(out), origin: from };
}

function referenceScan(data: Buffer, keys: Buffer[]) {
  let level = { data, origin: [...data.keys()] };
  let hit: { index: number; offset: number } | undefined;
  for (let n = 0; n < 4; n++) {
    for (const [index, key] of keys.entries()) {
      const at = level.data.indexOf(key);
      if (at >= 0 && (!hit || level.origin[at]! < hit.offset)) hit = { index, offset: level.origin[at]! };
    }
    level = unescapeAll(level.data, level.origin);
  }
  return hit;
}

describe("SecretScanner against a slow reference", () => {
  const keys = [Buffer.from('sk-ab/c"d\\e-é😀-12345'), Buffer.from("tok_0123456789")];
  /** A key written with a random mix of literal characters, \u escapes (either case) and one-character escapes. */
  const encode = (pick: (n: number) => number, text: string) =>
    [...text]
      .map((c) => {
        const code = [...Buffer.from(c)].length > 1 || pick(3) === 0;
        if (code && c.length === 2) return [...c].map((u) => `\\u${u.charCodeAt(0).toString(16)}`).join("");
        if (code)
          return `\\u${c.codePointAt(0)!.toString(16).padStart(4, "0")}`[
            pick(2) ? "toUpperCase" : "toString"
          ]();
        return JSON.stringify(c).slice(1, -1);
      })
      .join("")
      .replace(/\\U/g, "\\u");
  const piece = (pick: (n: number) => number): string | Buffer => {
    const key = keys[pick(2)]!.toString();
    switch (pick(7)) {
      case 0:
        return Buffer.from(Array.from({ length: pick(64) }, () => (pick(3) ? pick(256) : 0x5c)));
      case 1:
        return JSON.stringify({ out: `a\n"b"\\ é 😀 \\u ${"x".repeat(pick(9))}` });
      case 2:
        return encode(pick, key.slice(0, pick(key.length))); // a part of a key: no hit
      case 3:
        return encode(pick, pick(2) ? key : encode(pick, key));
      case 4:
        // Escaped twice, or three times: a level that copies long stretches of the one before as they are.
        return JSON.stringify(encode(pick, pick(2) ? key : encode(pick, key))).slice(1, -1);
      case 5:
        // Whole chunks with no backslash, which pass every level as they are, with a key or a part of one.
        return `${"plain text ".repeat(pick(30))}${key.slice(pick(2) ? 0 : pick(key.length))}${pick(2) ? "" : "~"}`;
      default:
        return "\\".repeat(pick(4)) + "u00".slice(0, pick(4));
    }
  };

  it("finds the same first key at the same byte as decoding the whole input at once, in any chunk size", () => {
    const pick = random(16);
    let found = 0;
    for (let round = 0; round < 300; round++) {
      const data = Buffer.concat(
        [...Array.from({ length: 1 + pick(12) }, () => piece(pick)), "END"].map((p) => Buffer.from(p)),
      );
      const expected = referenceScan(data, keys);
      if (expected) found++;
      for (const chunk of [1 << 20, 97, 7, 1]) {
        const scanner = new SecretScanner(keys);
        for (let pos = 0; pos < data.length; pos += chunk) scanner.push(data.subarray(pos, pos + chunk), pos);
        scanner.end();
        const got = scanner.hit && { index: scanner.hit.index, offset: scanner.hit.offset };
        expect(got, `round ${round}, chunks of ${chunk}: ${JSON.stringify(data.toString("latin1"))}`).toEqual(
          expected,
        );
      }
    }
    // Most inputs hold a key, some none: both ways are compared.
    expect(found).toBeGreaterThan(100);
    expect(found).toBeLessThan(300);
  });
});
