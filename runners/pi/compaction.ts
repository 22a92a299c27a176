// Compaction, which pi-agent-core leaves to its host: when the context passes a share of the model's window,
// the older part of the conversation is summarized by the model and replaced by that summary. The caller
// appends the result as a `compaction` entry (transcript.ts), so the file stays append-only.
import {
  type Api,
  type AssistantMessage,
  completeSimple,
  type Message,
  type Model,
  type SimpleStreamOptions,
} from "@mariozechner/pi-ai";

export interface CompactionSettings {
  enabled: boolean;
  /** Share of the context window that triggers a compaction. */
  threshold: number;
  /** Tokens of recent conversation kept verbatim. */
  keepTokens: number;
  contextWindow: number;
}

/** Marks the summarization request, so a scripted provider (and a reader of its logs) can tell it apart. */
export const SUMMARY_MARKER = "<conversation-to-summarize>";

const SUMMARY_SYSTEM =
  "You write the summary a conversation continues from when its older part no longer fits the context. " +
  "Be faithful and specific; never invent anything.";

const SUMMARY_REQUEST =
  "Summarize the conversation above so that it can continue from your summary alone. Keep the user's goals " +
  "and requests, decisions and their reasons, facts learned (tool results included), names, numbers and " +
  "identifiers that matter, open questions, and what was being worked on last. Write notes, no preamble.";

/** How big the context of the last successful model request was, from its own usage report. */
export function contextTokens(messages: Message[]): number {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.role !== "assistant" || m.stopReason === "error" || m.stopReason === "aborted") continue;
    const u = m.usage;
    return u.totalTokens || u.input + u.output + u.cacheRead + u.cacheWrite;
  }
  return 0;
}

export function needsCompaction(messages: Message[], settings: CompactionSettings): boolean {
  return settings.enabled && contextTokens(messages) > settings.threshold * settings.contextWindow;
}

/** A rough count (about four characters a token), only used to choose how much to keep. */
export function estimateTokens(message: Message): number {
  return Math.ceil(JSON.stringify(message.content).length / 4);
}

/**
 * Where the kept part starts: at a user message, so a tool call is never separated from its result, and as
 * early as `keepTokens` allows, but always keeping at least the last user message and what followed it.
 * Undefined when there is nothing before that to summarize.
 */
export function chooseCut(messages: Message[], keepTokens: number): number | undefined {
  let kept = 0;
  let cut: number | undefined;
  for (let i = messages.length - 1; i > 0; i--) {
    kept += estimateTokens(messages[i]!);
    if (messages[i]!.role === "user" && (cut === undefined || kept <= keepTokens)) cut = i;
    if (cut !== undefined && kept > keepTokens) break;
  }
  return cut;
}

/** The conversation as plain text for the summarizer: roles, text, tool calls and (shortened) results. */
export function serialize(messages: Message[]): string {
  const lines: string[] = [];
  for (const m of messages) {
    if (m.role === "user") {
      lines.push(`[user]: ${typeof m.content === "string" ? m.content : textOf(m.content)}`);
    } else if (m.role === "assistant") {
      const text = textOf(m.content);
      if (text) lines.push(`[assistant]: ${text}`);
      for (const part of m.content) {
        if (part.type === "toolCall")
          lines.push(`[assistant called ${part.name}]: ${JSON.stringify(part.arguments)}`);
      }
    } else {
      const text = textOf(m.content);
      const short = text.length > 2_000 ? `${text.slice(0, 2_000)}… (${text.length} characters)` : text;
      lines.push(`[${m.toolName} ${m.isError ? "failed" : "returned"}]: ${short}`);
    }
  }
  return lines.join("\n");
}

/** Asks the model for the summary. Rejects with the provider's message when it fails or is aborted. */
export async function summarize(
  model: Model<Api>,
  messages: Message[],
  options: SimpleStreamOptions,
): Promise<{ summary: string; reply: AssistantMessage }> {
  const text = `${SUMMARY_MARKER}\n${serialize(messages)}\n</conversation-to-summarize>\n\n${SUMMARY_REQUEST}`;
  const request: Message = { role: "user", content: [{ type: "text", text }], timestamp: Date.now() };
  const reply = await completeSimple(model, { systemPrompt: SUMMARY_SYSTEM, messages: [request] }, options);
  if (reply.stopReason === "error" || reply.stopReason === "aborted") {
    throw new Error(reply.errorMessage ?? `the summary request ended: ${reply.stopReason}`);
  }
  const summary = textOf(reply.content).trim();
  if (!summary) throw new Error("the model returned an empty summary");
  return { summary, reply };
}

function textOf(content: Message["content"]): string {
  if (typeof content === "string") return content;
  return content
    .filter((part): part is { type: "text"; text: string } => part.type === "text")
    .map((part) => part.text)
    .join("");
}
