// What a CLI parser turns native output into: Brain events to log, plus the few things the harness itself must
// act on (a permission to ask, the end of the CLI's turn). Parsers are pure and fed one decoded line at a time,
// so they are tested on real captured transcripts.
import type { HarnessEvent } from "../../core/harness.js";
import type { ToolResult, Usage } from "../../protocol/runner.js";

export type CliEvent = Extract<
  HarnessEvent,
  { type: "assistant.delta" | "assistant.message" | "tool.call" | "tool.result" | "harness.warning" }
>;

/** How the CLI's own turn ended. */
export type CliTurnEnd =
  | { outcome: "completed" }
  | { outcome: "aborted" }
  | { outcome: "failed"; code: "provider_error" | "brain_error"; message: string };

export const event = {
  delta: (text: string): CliEvent => ({ type: "assistant.delta", data: { text } }),
  message: (text: string, usage?: Usage, stopReason?: string): CliEvent => ({
    type: "assistant.message",
    data: { text, ...(usage ? { usage } : {}), ...(stopReason ? { stop_reason: stopReason } : {}) },
  }),
  toolCall: (id: string, name: string, args: unknown): CliEvent => ({
    type: "tool.call",
    data: { id, name, arguments: asRecord(args) },
  }),
  toolResult: (id: string, text: string, isError: boolean): CliEvent => ({
    type: "tool.result",
    data: { id, ...textResult(text, isError) },
  }),
  warning: (message: string): CliEvent => ({ type: "harness.warning", data: { message } }),
};

export function textResult(text: string, isError: boolean): ToolResult {
  return { content: [{ type: "text", text }], is_error: isError };
}

/** Tool inputs are objects; anything else (a string, an array) is wrapped so the event stays valid. */
export function asRecord(value: unknown): Record<string, unknown> {
  if (value !== null && typeof value === "object" && !Array.isArray(value))
    return value as Record<string, unknown>;
  return value === undefined ? {} : { value };
}

/** Non-negative integer or undefined: CLIs report counts as numbers, sometimes null. */
export function count(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? Math.round(value) : undefined;
}

export function usageOf(fields: {
  input?: unknown;
  output?: unknown;
  cacheRead?: unknown;
  cacheWrite?: unknown;
  cost?: unknown;
}): Usage | undefined {
  const input = count(fields.input);
  const output = count(fields.output);
  if (input === undefined && output === undefined) return undefined;
  const usage: Usage = { input: input ?? 0, output: output ?? 0 };
  const cacheRead = count(fields.cacheRead);
  const cacheWrite = count(fields.cacheWrite);
  if (cacheRead !== undefined) usage.cache_read = cacheRead;
  if (cacheWrite !== undefined) usage.cache_write = cacheWrite;
  if (typeof fields.cost === "number" && fields.cost >= 0) usage.cost = fields.cost;
  return usage;
}

/** Text of a tool result's content in the shapes CLIs use: a string, or blocks of text (and images). */
export function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content))
    return content === undefined || content === null ? "" : JSON.stringify(content);
  return content
    .map((part) => {
      if (typeof part === "string") return part;
      if (part?.type === "text" && typeof part.text === "string") return part.text;
      if (part?.type === "image") return "[image]";
      return JSON.stringify(part);
    })
    .join("\n");
}
