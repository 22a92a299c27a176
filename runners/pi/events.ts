// pi's assistant messages as Brain's `assistant.message` data: the text, the usage with cache tokens, and a
// stop reason in the words Brain's other runners use.
import type { AssistantMessage, Usage as PiUsage } from "@mariozechner/pi-ai";
import type { MessageData, Usage } from "../../src/protocol/runner.js";

const STOP_REASONS: Record<AssistantMessage["stopReason"], string> = {
  stop: "stop",
  length: "length",
  toolUse: "tool_use",
  error: "error",
  aborted: "interrupted",
};

export function toUsage(usage: PiUsage): Usage {
  const count = (n: number) => Math.max(0, Math.round(n || 0));
  return {
    input: count(usage.input),
    output: count(usage.output),
    cache_read: count(usage.cacheRead),
    cache_write: count(usage.cacheWrite),
    // Costs are only known when prices are configured; zero means unknown here, so it is left out.
    ...(usage.cost?.total > 0 ? { cost: usage.cost.total } : {}),
  };
}

export function assistantText(message: AssistantMessage): string {
  return message.content
    .filter((part): part is { type: "text"; text: string } => part.type === "text")
    .map((part) => part.text)
    .join("");
}

/**
 * The event for a finished assistant message, or undefined for the empty placeholder pi records when a request
 * failed or was aborted before anything arrived (nothing happened that a reader needs to see).
 */
export function messageEvent(message: AssistantMessage): MessageData | undefined {
  const text = assistantText(message);
  const usage = toUsage(message.usage);
  const failed = message.stopReason === "error" || message.stopReason === "aborted";
  const empty =
    text === "" && usage.input + usage.output + (usage.cache_read ?? 0) + (usage.cache_write ?? 0) === 0;
  if (failed && empty) return undefined;
  return { text, usage, stop_reason: STOP_REASONS[message.stopReason] ?? message.stopReason };
}
