// The tool results of one answer as the model is sent them: each within MAX_RESULT_CHARS, and all of them
// together within MAX_MESSAGE_RESULT_CHARS, a fair share each.
import type { ModelMessage } from "ai";
import { describe, expect, it } from "vitest";
import {
  MAX_MESSAGE_RESULT_CHARS,
  MAX_RESULT_CHARS,
  resultShares,
  withBoundedResults,
} from "./conversation.js";

const resultsMessage = (values: string[]): ModelMessage => ({
  role: "tool",
  content: values.map((value, i) => ({
    type: "tool-result" as const,
    toolCallId: `call_${i}`,
    toolName: "read",
    output: { type: "text" as const, value },
  })),
});

const sentTexts = (message: ModelMessage) =>
  (message.content as { output: { value: string } }[]).map((part) => part.output.value);

describe("tool results of one answer", () => {
  it("are sent within one budget together, though each is within its own bound", () => {
    const values = Array.from({ length: 32 }, (_, i) => `start ${i}\n${"x".repeat(90_000)}\nend ${i}`);
    const [sent] = withBoundedResults([resultsMessage(values)]);
    const texts = sentTexts(sent!);
    const total = texts.reduce((sum, text) => sum + text.length, 0);
    // Each shortened result carries a note of what was left out, about 150 characters.
    expect(total).toBeLessThan(MAX_MESSAGE_RESULT_CHARS + 32 * 200);
    texts.forEach((text, i) => {
      expect(text.startsWith(`start ${i}\n`)).toBe(true);
      expect(text.endsWith(`\nend ${i}`)).toBe(true);
      expect(text).toContain("characters of this tool result left out");
    });
  });

  it("keeps short results whole and gives what they leave to the long ones", () => {
    expect(resultShares([10, 500_000, 20], 1_000, 800)).toEqual([10, 800, 20]);
    expect(resultShares([10, 500_000, 500_000], 1_000, 800)).toEqual([10, 495, 495]);
    const values = ["short and whole", "y".repeat(150_000), "z".repeat(150_000)];
    const texts = sentTexts(withBoundedResults([resultsMessage(values)])[0]!);
    expect(texts[0]).toBe("short and whole");
    expect(texts[1]!.length).toBeLessThan(MAX_RESULT_CHARS + 200);
    expect(texts[1]!.length).toBeGreaterThan(MAX_RESULT_CHARS - 200);
  });

  it("leaves a message within its budget as it is", () => {
    const messages = [resultsMessage(["a", "b".repeat(1000)])];
    expect(withBoundedResults(messages)).toBe(messages);
  });
});
