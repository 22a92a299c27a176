import { afterEach, describe, expect, it } from "vitest";
import { MAX_TOOL_RESULT_BYTES } from "../protocol/events.js";
import type { ToolResult } from "../protocol/runner.js";
import { events, makeBrain, scripted, type TestBrain } from "../testing/brain.js";
import { boundedResult } from "./tool-result-bound.js";
import type { ToolService } from "./tools.js";

let t: TestBrain;
afterEach(async () => {
  await t?.cleanup();
});

const SIZE = 20 << 20;
const big: ToolService = {
  list: async () => [{ name: "big", description: "20 MiB of text", input_schema: { type: "object" } }],
  call: async () => ({
    content: [{ type: "text", text: `first line\n${"y".repeat(SIZE)}\nlast line` }],
    is_error: false,
  }),
};
const logged = (result: { content: { text: string }[] }) => Buffer.byteLength(JSON.stringify(result.content));

describe("a tool result of tens of MB", () => {
  it("is logged cut to the bound, start and end kept, saying so, and the harness gets what the log holds", async () => {
    let got: ToolResult | undefined;
    const factory = scripted(async (options, turn) => {
      got = await options.call(turn, { id: "c1", name: "big", arguments: {} }, new AbortController().signal);
    });
    t = makeBrain({ factories: [factory], tools: [big] });
    const session = await t.brain.create({ harness: "scripted", config: { tools: ["big"] } });
    expect((await (await session.prompt("go")).settled).status).toBe("completed");
    const result = (await events(session)).find((e) => e.type === "tool.result");
    if (result?.type !== "tool.result") throw new Error("no tool.result");
    expect(logged(result.data)).toBeLessThanOrEqual(MAX_TOOL_RESULT_BYTES);
    const text = result.data.content[0]!.text;
    expect(text.startsWith("first line\n")).toBe(true);
    expect(text.endsWith("\nlast line")).toBe(true);
    expect(text).toMatch(/characters of this tool result left out/);
    expect(result.data.truncated?.total_chars).toBe(SIZE + 21);
    expect(result.data.truncated?.omitted_chars).toBeGreaterThan(SIZE - MAX_TOOL_RESULT_BYTES);
    expect(got).toEqual({ content: result.data.content, is_error: false });
  });

  it("that a harness reports of its own tool is logged within the bound too", async () => {
    const factory = scripted(async (options, turn) => {
      options.emit({ type: "tool.call", turn, data: { id: "n1", name: "Read", arguments: {} } });
      const content = [{ type: "text" as const, text: "z".repeat(SIZE) }];
      options.emit({ type: "tool.result", turn, data: { id: "n1", content, is_error: false } });
    });
    t = makeBrain({ factories: [factory] });
    const session = await t.brain.create({ harness: "scripted" });
    expect((await (await session.prompt("go")).settled).status).toBe("completed");
    const result = (await events(session)).find((e) => e.type === "tool.result");
    if (result?.type !== "tool.result") throw new Error("no tool.result");
    expect(logged(result.data)).toBeLessThanOrEqual(MAX_TOOL_RESULT_BYTES);
    expect(result.data.truncated).toMatchObject({ total_chars: SIZE });
  });
});

describe("boundedResult", () => {
  it("measures the text as the log encodes it: characters that take several bytes, or escapes, count as such", () => {
    const escaped = { content: [{ type: "text" as const, text: "\u0001".repeat(400_000) }], is_error: true };
    const wide = { content: [{ type: "text" as const, text: "😀".repeat(300_000) }], is_error: false };
    for (const result of [escaped, wide]) {
      const { result: cut, truncated } = boundedResult(result);
      expect(truncated).toBeDefined();
      expect(logged(cut)).toBeLessThanOrEqual(MAX_TOOL_RESULT_BYTES);
      expect(cut.is_error).toBe(result.is_error);
      // No half of a surrogate pair is left at either side of the cut.
      expect(cut.content[0]!.text).not.toMatch(
        /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/,
      );
    }
  });

  it("leaves a result within the bound as it is, and joins a flood of parts into one", () => {
    const small = { content: [{ type: "text" as const, text: "x".repeat(500_000) }], is_error: false };
    expect(boundedResult(small).result).toBe(small);
    const parts = Array.from({ length: 100_000 }, (_, i) => ({ type: "text" as const, text: `${i}` }));
    const { result, truncated } = boundedResult({ content: parts, is_error: false });
    expect(result.content).toHaveLength(1);
    expect(result.content[0]!.text.startsWith("0\n1\n2\n")).toBe(true);
    expect(truncated?.omitted_chars).toBe(0);
  });
});
