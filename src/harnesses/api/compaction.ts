// Compaction: when the conversation has grown past the configured size, the model summarises it, and the
// summary (an appended entry) stands in for everything before it from then on.
import type { ModelMessage } from "ai";

export const SUMMARY_REQUEST = [
  "Summarise our conversation so far for your own later use: it will replace the conversation itself.",
  "Keep every fact, decision, name, path, number and open question that later work may need, what tools",
  "were called and what they returned when it matters, and what the user asked for last and whether it is done.",
  "Write plain prose and lists; no preamble.",
].join(" ");

/** The request that asks for the summary: the conversation as it would be sent, then the instruction. */
export function summaryRequest(context: ModelMessage[]): ModelMessage[] {
  return [...context, { role: "user", content: SUMMARY_REQUEST }];
}

export function shouldCompact(lastInputTokens: number, threshold: number, messages: number): boolean {
  return threshold > 0 && messages > 0 && lastInputTokens >= threshold;
}
