// A turn's text gathered as bytes: the whole text is the pieces joined, whatever they hold, and each piece's
// delta data gives back that piece (as the log will write it).
import { describe, expect, it } from "vitest";
import { heldBytes } from "./fast-frames.js";
import { TextBytes } from "./text-bytes.js";

const bytesOf = (data: unknown): string | undefined => {
  const held = heldBytes(data);
  if (!held) return undefined;
  const out = Buffer.alloc(held.byteLength);
  held.copyTo(out, 0);
  return out.toString("utf8");
};

describe("TextBytes", () => {
  it("is the pieces joined, and gives each piece back as its delta's data", () => {
    const acc = new TextBytes();
    expect(acc.empty).toBe(true);
    const pieces = [
      "plain ",
      "é日本😀",
      'q"uote',
      "back\\slash",
      "tab\t",
      "\u2028",
      "x".repeat(70_000),
      "end",
    ];
    const data = pieces.map((p) => acc.add(p));
    expect(acc.text()).toBe(pieces.join(""));
    expect(data.map((d) => d.text)).toEqual(pieces);
    // Pieces JSON writes as they are are the accumulator's bytes (across its growth); the rest plain strings.
    expect(data.map((d) => bytesOf(d) !== undefined)).toEqual([
      true,
      true,
      false,
      false,
      false,
      true,
      true,
      true,
    ]);
    expect(data.map((d) => bytesOf(d) ?? d.text)).toEqual(pieces);
    expect(JSON.stringify(data[1])).toBe(JSON.stringify({ text: pieces[1] }));
  });

  it("keeps a long turn's text whole across its blocks, and every piece's bytes as they were", () => {
    const acc = new TextBytes();
    const pieces = Array.from(
      { length: 30_000 },
      (_, i) => `${i % 7 === 0 ? "é😀" : "w"}${"x".repeat(i % 97)} `,
    );
    const data = pieces.map((p, i) =>
      i % 2 ? acc.add(p) : acc.addBytes(Buffer.from(p), 0, Buffer.byteLength(p)),
    );
    expect(acc.text()).toBe(pieces.join(""));
    expect(data.map((d) => bytesOf(d))).toEqual(pieces);
  });

  it("gives the same text whether its blocks are all ASCII or not (ASCII blocks are read as Latin-1)", () => {
    const acc = new TextBytes();
    // Over 3 MB: several full 1 MiB blocks of ASCII, then pieces with é and 😀 in the last ones only.
    const pieces = Array.from({ length: 16_000 }, (_, i) =>
      i < 14_000 ? `${"a".repeat(200)}${i % 10} ` : `é${"b".repeat(150)}😀 `,
    );
    for (const p of pieces) acc.addBytes(Buffer.from(p), 0, Buffer.byteLength(p));
    const text = acc.text();
    expect(text.length).toBe(pieces.join("").length);
    expect(text).toBe(pieces.join(""));
    expect(acc.message("stop").text).toBe(text);
  });

  it("decodes a long non-ASCII block in pieces without cutting a character in two", () => {
    const acc = new TextBytes();
    // One piece of 1 + 4 × 30 000 bytes: every 32 KiB boundary of the block falls inside a 😀.
    const piece = `a${"😀".repeat(30_000)}`;
    acc.addBytes(Buffer.from(piece), 0, Buffer.byteLength(piece));
    acc.add("é".repeat(40_000)); // and a second piece of two-byte characters after it, in the same block
    expect(acc.text()).toBe(`${piece}${"é".repeat(40_000)}`);
    expect(acc.message("done").text).toBe(acc.text());
  });

  it("takes plain bytes read from a stream as pieces too, before and after a lone surrogate", () => {
    const acc = new TextBytes();
    const chunk = Buffer.from("..héllo..wörld..");
    const first = acc.addBytes(chunk, 2, 8);
    expect(bytesOf(first)).toBe("héllo");
    acc.add("\udc00");
    const after = acc.addBytes(chunk, 10, 16);
    expect(after).toEqual({ text: "wörld" });
    expect(acc.text()).toBe("héllo\udc00wörld");
  });

  it("adds plain bytes and declines any others, adding nothing, before and after a lone surrogate", () => {
    const acc = new TextBytes();
    const view = (b: Buffer) => new DataView(b.buffer, b.byteOffset, b.length);
    const pieces = ["plain ", "é日😀", 'q"uote', "back\\slash", "tab\t", "x".repeat(70_000), "\u2028", "end"];
    const invalid = Buffer.from([0x61, 0xc0, 0x62]);
    let expected = "";
    for (const round of [0, 1]) {
      if (round === 1) {
        acc.add("\ud800");
        expected += "\ud800";
      }
      for (const p of pieces) {
        const chunk = Buffer.from(`..${p}..`);
        const data = acc.addPlain(chunk, 2, chunk.length - 2, view(chunk));
        expect(acc.addPlain(invalid, 0, 3, view(invalid))).toBeUndefined();
        if (/["\\\u0000-\u001f]/.test(p)) {
          expect(data).toBeUndefined();
          continue;
        }
        expect(data?.text).toBe(p);
        // Before the surrogate, the accumulator's own bytes (what the log copies); after it, a plain {text}.
        expect(bytesOf(data)).toBe(round === 0 ? p : undefined);
        expected += p;
      }
    }
    expect(acc.text()).toBe(expected);
  });

  it("keeps a lone surrogate exactly (UTF-8 cannot carry one), and every piece after it", () => {
    const acc = new TextBytes();
    const pieces = ["before ", "\ud83d", "\ude00 after", "more"];
    const data = pieces.map((p) => acc.add(p));
    expect(acc.text()).toBe(pieces.join(""));
    expect(data.map((d) => d.text)).toEqual(pieces);
    expect(data.slice(1).every((d) => bytesOf(d) === undefined)).toBe(true);
    expect(acc.empty).toBe(false);
  });
});
