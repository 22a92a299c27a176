import { isUtf8 } from "node:buffer";
import { describe, expect, it } from "vitest";
import { copyPlain, ExactBytes, plainToken } from "./fast-lines.js";

/** The rule plainToken keeps, byte by byte: the reference for its four-bytes-at-a-time reading. */
function reference(chunk: Buffer, start: number): number {
  for (let i = start; i < chunk.length; i++) {
    const b = chunk[i]!;
    if (b === 0x22) return isUtf8(chunk.subarray(start, i)) ? i : -1;
    if (b < 0x20 || b === 0x5c) return -1;
  }
  return -1;
}

const b = (s: string) => Buffer.from(s);
const view = (b: Buffer) => new DataView(b.buffer, b.byteOffset, b.length);

/** A seeded generator, so a failure can be replayed. */
function random(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s * 1103515245 + 12345) & 0x7fffffff;
    return s / 0x80000000;
  };
}

describe("plainToken", () => {
  it("finds the same end with or without the chunk's view, on every byte that matters at every offset", () => {
    const special = [
      0x22, 0x5c, 0x00, 0x1f, 0x20, 0x21, 0x23, 0x5b, 0x5d, 0x7f, 0x80, 0xbf, 0xc3, 0xe2, 0xff,
    ];
    for (let len = 0; len < 12; len++) {
      for (const b of special) {
        for (let at = 0; at < len; at++) {
          const bytes = Buffer.alloc(len + 1, 0x61);
          bytes[at] = b;
          bytes[len] = 0x22;
          // At every alignment within the underlying buffer, and from every start.
          for (let shift = 0; shift < 4; shift++) {
            const chunk = Buffer.concat([Buffer.alloc(shift, 0x61), bytes]).subarray(shift);
            for (let start = 0; start <= len; start++)
              expect(plainToken(chunk, start, view(chunk))).toBe(reference(chunk, start));
          }
        }
      }
    }
  });

  it("agrees with the byte-by-byte rule on generated text (UTF-8, escapes, controls, cut lines)", () => {
    const next = random(7);
    const pieces = ["a", "é", "😀", '"', "\\", "\n", "\u0001", " ", "}", "\u007f"];
    for (let n = 0; n < 3000; n++) {
      let text = "";
      const len = Math.floor(next() * 40);
      for (let i = 0; i < len; i++) text += next() < 0.85 ? "x" : pieces[Math.floor(next() * pieces.length)];
      let chunk = Buffer.from(`${text}"}}`);
      if (next() < 0.2) chunk = chunk.subarray(0, Math.floor(next() * chunk.length)); // cut mid-line
      if (next() < 0.1 && chunk.length > 0) chunk[Math.floor(next() * chunk.length)] = 0xc0; // invalid UTF-8
      const start = Math.floor(next() * 3);
      expect(plainToken(chunk, start, view(chunk))).toBe(reference(chunk, start));
      expect(plainToken(chunk, start)).toBe(reference(chunk, start));
    }
  });
});

/** copyPlain's answer for bytes [start, end) of `chunk`, after checking it copied them when it says they are plain. */
function copied(chunk: Buffer, start: number, end: number, shift: number): boolean {
  const dst = Buffer.alloc(shift + end - start + 3, 0xaa).subarray(shift);
  const plain = copyPlain(chunk, view(chunk), start, end, dst, view(dst), 1);
  if (plain && !dst.subarray(1, 1 + end - start).equals(chunk.subarray(start, end)))
    throw new Error("not copied");
  return plain;
}

/** What copyPlain must say of [start, end): plainToken's rule for a token whose closing quote is at `end`. */
function plainRange(chunk: Buffer, start: number, end: number): boolean {
  const token = Buffer.concat([chunk.subarray(start, end), Buffer.from('"')]);
  return reference(token, 0) === end - start;
}

describe("copyPlain", () => {
  it("says what plainToken's rule says, on every byte that matters at every offset and alignment", () => {
    const special = [
      0x22, 0x5c, 0x00, 0x1f, 0x20, 0x21, 0x23, 0x5b, 0x5d, 0x7f, 0x80, 0xa2, 0xbf, 0xc3, 0xdc, 0xe2, 0xff,
    ];
    const wrong: string[] = [];
    for (let len = 0; len < 13; len++) {
      for (const b of special) {
        for (let at = 0; at < len; at++) {
          const bytes = Buffer.alloc(len, 0x61);
          bytes[at] = b;
          // A high byte among ASCII is invalid UTF-8 alone; with é before it, a lead byte may complete it.
          if (at > 1 && b >= 0x80 && b < 0xc0) bytes.set([0xc3], at - 1);
          for (let shift = 0; shift < 4; shift++) {
            const chunk = Buffer.concat([Buffer.alloc(shift, 0x61), bytes]).subarray(shift);
            // Every start alignment, and every end after it.
            for (let start = 0; start <= Math.min(len, 3); start++)
              for (let end = start; end <= len; end++)
                if (copied(chunk, start, end, shift) !== plainRange(chunk, start, end))
                  wrong.push(`${b} at ${at} of ${len}, shifted ${shift}: [${start}, ${end})`);
          }
        }
      }
    }
    expect(wrong).toEqual([]);
  });

  it("agrees with the byte-by-byte rule on generated text", () => {
    const next = random(11);
    const pieces = ["a", "é", "😀", "日", '"', "\\", "\n", "\u0001", " ", "}", "\u007f", "\u00ff"];
    for (let n = 0; n < 3000; n++) {
      let text = "";
      const len = Math.floor(next() * 60);
      for (let i = 0; i < len; i++) text += next() < 0.8 ? "x" : pieces[Math.floor(next() * pieces.length)];
      const chunk = Buffer.from(text);
      if (next() < 0.1 && chunk.length > 0) chunk[Math.floor(next() * chunk.length)] = 0xc0; // invalid UTF-8
      const start = Math.floor(next() * Math.min(3, chunk.length + 1));
      const end = start + Math.floor(next() * (chunk.length - start + 1));
      expect(copied(chunk, start, end, n % 4)).toBe(plainRange(chunk, start, end));
    }
  });
});

describe("ExactBytes", () => {
  it("tells apart bytes whose eight-byte words are equal as doubles but not as bits (0 and -0, NaNs)", () => {
    const zero = Buffer.alloc(8);
    const minusZero = Buffer.from([0, 0, 0, 0, 0, 0, 0, 0x80]);
    const nan = Buffer.from([1, 0, 0, 0, 0, 0, 0xf8, 0x7f]);
    const otherNan = Buffer.from([2, 0, 0, 0, 0, 0, 0xf8, 0x7f]);
    for (const [want, chunk] of [
      [zero, minusZero],
      [minusZero, zero],
      [nan, otherNan],
      [nan, nan],
      [Buffer.concat([b("abcdefgh"), zero]), Buffer.concat([b("abcdefgh"), minusZero])],
    ] as const) {
      const exact = new ExactBytes(want);
      expect(exact.at(chunk, view(chunk), 0)).toBe(want.equals(chunk));
      expect(exact.at(want, view(want), 0)).toBe(true);
    }
  });

  it("is bytes-equal at a position, at every length and alignment, and never past the chunk's end", () => {
    const text = Buffer.from('{"jsonrpc":"2.0","method":"harness.event","params":{"runId":"r1"');
    for (let n = 0; n <= 21; n++) {
      const exact = new ExactBytes(text.subarray(3, 3 + n));
      for (let pos = 0; pos < 8; pos++) {
        const chunk = text.subarray(3 - Math.min(pos, 3), 3 + n + 2);
        const at = Math.min(pos, 3);
        expect(exact.at(chunk, view(chunk), at)).toBe(true);
        for (let k = 0; k < n; k++) {
          const changed = Buffer.from(chunk);
          changed[at + k] = changed[at + k]! ^ 1;
          expect(exact.at(changed, view(changed), at)).toBe(false);
        }
        const short = chunk.subarray(0, at + n - 1);
        if (n > 0) expect(exact.at(short, view(short), at)).toBe(false);
      }
    }
  });
});
