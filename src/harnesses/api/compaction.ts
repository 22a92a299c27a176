// Compaction: when the conversation has grown past the configured size, the model summarises it, and the
// summary (an appended entry) stands in for everything before it from then on.
import type { ModelMessage } from "ai";

export const SUMMARY_REQUEST = [
  "Summarise our conversation so far for your own later use: it will replace the conversation itself.",
  "Keep every fact, decision, name, path, number and open question that later work may need, what tools",
  "were called and what they returned when it matters, and what the user asked for last and whether it is done.",
  "Write plain prose and lists; no preamble.",
].join(" ");

/**
 * Characters of each tool result in a second try at the summary, when the first failed: a conversation past the
 * model's context is mostly tool output, and the summary needs its gist, not its bytes.
 */
export const SUMMARY_RESULT_CHARS = 2_000;

/** The request that asks for the summary: the conversation as it would be sent, then the instruction. */
export function summaryRequest(context: ModelMessage[]): ModelMessage[] {
  return [...context, { role: "user", content: SUMMARY_REQUEST }];
}

export function shouldCompact(inputTokens: number, threshold: number, messages: number): boolean {
  return threshold > 0 && messages > 0 && inputTokens >= threshold;
}
