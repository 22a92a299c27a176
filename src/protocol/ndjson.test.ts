import { describe, expect, it } from "vitest";
import { FramingError, LineSplitter } from "./ndjson.js";
import { MAX_FRAME } from "./runner.js";

function collect(max?: number) {
  const lines: string[] = [];
  const splitter = new LineSplitter((line) => lines.push(line), max);
  return { lines, splitter };
}

describe("LineSplitter", () => {
  it("splits on \\n only, keeping U+2028 and U+2029 inside a line", () => {
    const { lines, splitter } = collect();
    splitter.push(Buffer.from('{"text":"a\u2028b\u2029c"}\n{"x":1}\n'));
    expect(lines).toEqual(['{"text":"a\u2028b\u2029c"}', '{"x":1}']);
  });

  it("joins a line spread over many chunks, including a multi-byte character cut in half", () => {
    const { lines, splitter } = collect();
    const bytes = Buffer.from('{"text":"héllo wörld ✓"}\n');
    for (let i = 0; i < bytes.length; i++) splitter.push(bytes.subarray(i, i + 1));
    expect(lines).toEqual(['{"text":"héllo wörld ✓"}']);
    expect(splitter.buffered).toBe(0);
  });

  it("accepts a line of exactly the cap and refuses one byte more", () => {
    const ok = collect(16);
    ok.splitter.push(Buffer.from(`${"a".repeat(16)}\n`));
    expect(ok.lines).toHaveLength(1);
    const bad = collect(16);
    expect(() => bad.splitter.push(Buffer.from(`${"a".repeat(17)}\n`))).toThrow(FramingError);
  });

  it("names its own cap, not the frame cap, when given another", () => {
    const { splitter } = collect(64 << 20);
    expect(() => splitter.push(Buffer.alloc((64 << 20) + 1, 0x61))).toThrow(/capped at 64 MiB per line/);
    expect(() => collect(16).splitter.push(Buffer.from("a".repeat(17)))).toThrow(
      /capped at 16 bytes per line/,
    );
  });

  it("refuses an over-long line before it has been buffered whole", () => {
    const { splitter } = collect();
    const chunk = Buffer.alloc(1 << 20, 0x61);
    for (let i = 0; i < 4; i++) splitter.push(chunk); // exactly 4 MiB so far: still fine
    expect(splitter.buffered).toBe(MAX_FRAME);
    expect(() => splitter.push(Buffer.from("a"))).toThrow(/capped at 4 MiB/);
    expect(splitter.buffered).toBe(0);
  });

  it("reports a half-written last line at end of stream", () => {
    const { lines, splitter } = collect();
    splitter.push(Buffer.from('{"a":1}\n{"b":'));
    expect(lines).toEqual(['{"a":1}']);
    expect(() => splitter.end()).toThrow(/middle of a frame/);
  });
});
