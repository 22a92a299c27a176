// pi's `message_update` lines read from their heads give the parser what decoding them whole gave it: on real pi
// 0.73.1 captures, fed whole and a few bytes at a time, and on deltas JSON escapes or multi-byte characters.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { HeadLineSplitter } from "../../protocol/head-lines.js";
import { TRANSCRIPTS } from "../../testing/transcripts.js";
import { PiEventParser, type PiSignal } from "./parser.js";
import { piUpdateHead } from "./updates.js";

/** The signals of pi's stdout read as the harness reads it, in chunks of `size` bytes. */
function read(bytes: Buffer, size: number): { signals: PiSignal[]; whole: string[] } {
  const parser = new PiEventParser();
  const signals: PiSignal[] = [];
  const whole: string[] = [];
  const take = (message: unknown) => signals.push(...parser.handle(message));
  const splitter = new HeadLineSplitter(
    (line) => {
      whole.push(line);
      if (line !== "") take(JSON.parse(line));
    },
    1 << 20,
    piUpdateHead(take),
  );
  for (let at = 0; at < bytes.length; at += size) splitter.push(bytes.subarray(at, at + size));
  return { signals, whole };
}

function decodedWhole(bytes: Buffer): PiSignal[] {
  const parser = new PiEventParser();
  return bytes
    .toString()
    .split("\n")
    .filter((line) => line !== "")
    .flatMap((line) => parser.handle(JSON.parse(line)));
}

describe.each([
  "openai-completions-a-rpc",
  "openai-responses-a-rpc",
  "anthropic-messages-a-rpc",
  "openai-completions-b-resume",
])("pi's %s capture read from line heads", (name) => {
  const bytes = readFileSync(join(TRANSCRIPTS, `pi/${name}.jsonl`));

  it.each([1 << 16, 7, 1])("gives the signals of decoding every line whole (chunks of %i bytes)", (size) => {
    const { signals, whole } = read(bytes, size);
    expect(signals).toEqual(decodedWhole(bytes));
    expect(signals.some((s) => s.kind === "event" && s.event.type === "assistant.delta")).toBe(true);
    expect(whole.filter((line) => line.startsWith('{"type":"message_update"'))).toEqual([]);
  });
});

describe("a message_update head", () => {
  const update = (delta: string, type = "text_delta") =>
    `${JSON.stringify({
      type: "message_update",
      assistantMessageEvent: { type, contentIndex: 2, delta, partial: { content: [{ text: `x${delta}` }] } },
      message: { content: [{ text: `x${delta}` }] },
    })}\n`;

  it("decodes deltas with escapes, quotes and characters of several bytes, cut anywhere", () => {
    const deltas = ['say "hi"\\', "wörld ✓ 😀", '\\\\"', "tab\there\nnew line \u2028", "\u0000"];
    const bytes = Buffer.from(deltas.map((d) => update(d)).join(""));
    for (const size of [1, 3, 1 << 16]) {
      const { signals, whole } = read(bytes, size);
      expect(whole).toEqual([]);
      expect(signals.map((s) => s.kind === "event" && s.event.data)).toEqual(
        deltas.map((text) => ({ text })),
      );
    }
  });

  it("leaves a line in another shape to the whole decode", () => {
    const other = [
      `${JSON.stringify({ type: "message_update", message: {}, assistantMessageEvent: { type: "text_delta", delta: "a" } })}\n`,
      `${JSON.stringify({ type: "message_update", assistantMessageEvent: { type: "text_delta", delta: "b" } })}\n`,
      '{"type":"message_update","assistantMessageEvent":{"type":"text_delta","contentIndex":0,"delta":"c\\q"}}\n',
      '{"type":"message_update","assistantMessageEvent":{"type":"text_delta","contentIndex":0,"delta":"unended\n',
    ];
    const { whole } = read(Buffer.from(other.slice(0, 2).join("")), 5);
    expect(whole).toHaveLength(2);
    expect(() => read(Buffer.from(other[2]!), 5)).toThrow(/JSON/);
    expect(() => read(Buffer.from(other[3]!), 5)).toThrow(/JSON/);
  });
});
