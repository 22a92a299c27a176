// Scripted replies: the FIFO queue of steps, the fallback, and turning a step into what the writers render.
import type { FakeProviderRequest, Reply, ScriptStep, TokenUsage } from "./types.js";

const DEFAULT_CHUNK_SIZE = 8;

/**
 * The text of the last user message in a chat-completions, messages, responses, Gemini or Ollama body, or ""
 * when none. User turns that carry only tool results (Anthropic `tool_result`, Responses
 * `function_call_output`, Gemini `functionResponse`) have no text and are passed over, so an echo after a tool
 * call repeats the prompt that started the turn.
 */
export function lastUserText(req: Pick<FakeProviderRequest, "body">): string {
  const body = req.body;
  if (body === null || typeof body !== "object") return "";
  if (typeof body.input === "string") return body.input;
  if (Array.isArray(body.contents)) return lastGeminiUserText(body.contents);
  const messages: unknown = Array.isArray(body.messages) ? body.messages : body.input;
  if (!Array.isArray(messages)) return "";
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i] as { role?: unknown; content?: unknown } | null;
    if (message?.role !== "user") continue;
    const text = contentText(message.content);
    if (text !== undefined) return text;
  }
  return "";
}

/** Gemini's `contents`: `{role: "user", parts: [{text}, {functionResponse}, …]}`. */
function lastGeminiUserText(contents: unknown[]): string {
  for (let i = contents.length - 1; i >= 0; i--) {
    const content = contents[i] as { role?: unknown; parts?: unknown } | null;
    if (content?.role !== "user" || !Array.isArray(content.parts)) continue;
    const texts = content.parts
      .map((part) => (part as { text?: unknown } | null)?.text)
      .filter((text): text is string => typeof text === "string");
    if (texts.length > 0) return texts.join("\n");
  }
  return "";
}

/** A string, or the joined text parts of a content array; undefined when there are no text parts. */
function contentText(content: unknown): string | undefined {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return undefined;
  const texts = content
    .filter((part) => part?.type === "text" || part?.type === "input_text")
    .map((part) => part.text)
    .filter((text): text is string => typeof text === "string");
  return texts.length > 0 ? texts.join("\n") : undefined;
}

export function echoFallback(req: FakeProviderRequest): ScriptStep {
  return { text: `echo: ${lastUserText(req)}` };
}

/** A rough count in the spirit of real tokenizers: about four characters a token, never zero. */
export function estimateTokens(chars: number): number {
  return Math.max(1, Math.ceil(chars / 4));
}

export class ScriptQueue {
  private steps: ScriptStep[] = [];
  private fallback: (req: FakeProviderRequest) => ScriptStep = echoFallback;

  push(steps: ScriptStep[]): void {
    this.steps.push(...steps);
  }

  setFallback(fn: (req: FakeProviderRequest) => ScriptStep): void {
    this.fallback = fn;
  }

  clear(): void {
    this.steps = [];
  }

  next(req: FakeProviderRequest): ScriptStep {
    return this.steps.shift() ?? this.fallback(req);
  }
}

/** Builds the reply for a text or tool-call step, filling in plausible usage when the step gives none. */
export function toReply(
  step: Extract<ScriptStep, { text: string } | { toolCalls: unknown }>,
  requestChars: number,
): Reply {
  const text = step.text ?? "";
  const toolCalls =
    "toolCalls" in step
      ? step.toolCalls.map((call) => ({
          id: call.id,
          name: call.name,
          ...(call.namespace ? { namespace: call.namespace } : {}),
          argumentsJson: call.argumentsJson ?? JSON.stringify(call.arguments),
        }))
      : [];
  const replyChars = text.length + toolCalls.reduce((n, c) => n + c.name.length + c.argumentsJson.length, 0);
  const usage: TokenUsage = step.usage ?? {
    input: estimateTokens(requestChars),
    output: estimateTokens(replyChars),
  };
  const chunkSize = "chunkSize" in step && step.chunkSize ? step.chunkSize : DEFAULT_CHUNK_SIZE;
  const delayMs = "delayMs" in step && step.delayMs ? step.delayMs : 0;
  const breakAfter = "breakAfter" in step ? step.breakAfter : undefined;
  const endAfter = "endAfter" in step ? step.endAfter : undefined;
  const stallAfter = "stallAfter" in step ? step.stallAfter : undefined;
  const streamError = "streamError" in step ? step.streamError : undefined;
  const stopReason = "stopReason" in step ? step.stopReason : undefined;
  const { reasoning } = step;
  const interleave = "interleave" in step && step.interleave === true;
  const refusal = "refusal" in step && step.refusal === true;
  return {
    text,
    toolCalls,
    chunkSize: Math.max(1, chunkSize),
    delayMs,
    usage,
    ...(breakAfter === undefined ? {} : { breakAfter }),
    ...(endAfter === undefined ? {} : { endAfter }),
    ...(stallAfter === undefined ? {} : { stallAfter }),
    ...(streamError === undefined ? {} : { streamError }),
    ...(stopReason === undefined ? {} : { stopReason }),
    ...(reasoning === undefined ? {} : { reasoning }),
    ...(interleave ? { interleave } : {}),
    ...(refusal ? { refusal } : {}),
  };
}

/** Splits by code point so a chunk boundary never cuts a surrogate pair in half. */
export function chunk(text: string, size: number): string[] {
  const chars = Array.from(text);
  const out: string[] = [];
  for (let i = 0; i < chars.length; i += size) out.push(chars.slice(i, i + size).join(""));
  return out;
}
