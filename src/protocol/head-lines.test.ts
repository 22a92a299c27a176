import { describe, expect, it } from "vitest";
import { HeadLineSplitter, type LineHead } from "./head-lines.js";
import { FramingError } from "./ndjson.js";

/** Takes lines that start with "skip:" once it has seen "skip:", asks for more of a shorter head. */
function collect(max = 1 << 20) {
  const lines: string[] = [];
  const heads: string[] = [];
  const head: LineHead = (bytes, complete) => {
    heads.push(bytes.toString());
    if (bytes.length < 5 && !complete) return "more";
    if (!bytes.subarray(0, 5).equals(Buffer.from("skip:"))) return "line";
    lines.push(`taken ${bytes.subarray(5, 8).toString()}`);
    return "taken";
  };
  return { lines, heads, splitter: new HeadLineSplitter((line) => lines.push(line), max, head) };
}

describe("HeadLineSplitter", () => {
  it("gives lines the hook declines to onLine whole, and keeps the order of taken and whole lines", () => {
    const { lines, splitter } = collect();
    splitter.push(Buffer.from("one\nskip:abc and much more\ntwo wörds\n\nskip:xyz\n"));
    expect(lines).toEqual(["one", "taken abc", "two wörds", "", "taken xyz"]);
  });

  it("shows a longer head when the hook asks for more, and joins the line it then declines", () => {
    const { lines, heads, splitter } = collect();
    for (const c of "ab\nsk") splitter.push(Buffer.from(c));
    splitter.push(Buffer.from("ip:def"));
    splitter.push(Buffer.from("ghi\nlin"));
    splitter.push(Buffer.from("e\n"));
    expect(lines).toEqual(["ab", "taken def", "line"]);
    // "ab" twice: the newline, alone in its chunk, tells the hook the line is whole.
    expect(heads).toEqual(["a", "ab", "ab", "s", "sk", "skip:def", "lin", "line"]);
  });

  it("skips the rest of a taken line unread, however long, and refuses a long line it gives whole", () => {
    const { lines, heads, splitter } = collect(16);
    splitter.push(Buffer.from("skip:123"));
    for (let i = 0; i < 100; i++) splitter.push(Buffer.alloc(1000, 0x61));
    splitter.push(Buffer.from("aaa\nnext\n"));
    expect(lines).toEqual(["taken 123", "next"]);
    expect(heads).toEqual(["skip:123", "next"]);
    expect(() => splitter.push(Buffer.from(`${"b".repeat(17)}\n`))).toThrow(FramingError);
  });
});
