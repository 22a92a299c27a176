// One model request of a turn, streamed: text deltas go out as they come, tool calls are collected (not run:
// the tools have no `execute`, Brain runs them), and the outcome is what the turn loop needs to go on.
import {
  type FinishReason,
  type LanguageModel,
  type LanguageModelUsage,
  type ModelMessage,
  NoOutputGeneratedError,
  type ProviderMetadata,
  streamText,
  type ToolSet,
} from "ai";
import { unknownEventType } from "./errors.js";
import { type ApiSettings, DEFAULTS } from "./settings.js";

export interface StepRequest {
  model: LanguageModel;
  system?: string;
  messages: ModelMessage[];
  tools: ToolSet;
  toolChoice?: "none";
  settings: ApiSettings;
  /** Per-provider request options; the same shape as the metadata providers return. */
  providerOptions?: ProviderMetadata;
  signal: AbortSignal;
  onDelta(text: string): void;
  onWarning(message: string): void;
  /** An event the SDK package could not read only because its type is newer than the package: passed over. */
  onUnknownEvent(type: string): void;
  /** Those taken out of the stream before its first event, where the package would have failed on them. */
  unknownFirstEvents?: () => string[];
  /** The error the provider streamed, when its SDK package dropped it and only ended the stream. */
  streamError?: () => string | undefined;
  /** Its SDK package drops a Chat Completions `refusal` delta: read it from the raw chunks, as text. */
  refusalsInRaw?: boolean;
  /** What the turn's answers streamed so far (shared by its steps): with this answer, within settings.maxTurnChars. */
  streamed?: { chars: number };
}

export interface StepToolCall {
  id: string;
  name: string;
  /** The parsed arguments, or the raw text when the model sent something that is not JSON. */
  input: unknown;
}

export type StepOutcome =
  | {
      kind: "done";
      text: string;
      toolCalls: StepToolCall[];
      /** The assistant message as the SDK built it, provider metadata (signatures, item ids) included. */
      messages: ModelMessage[];
      usage: LanguageModelUsage;
      providerMetadata: ProviderMetadata | undefined;
      finishReason: FinishReason;
      /** The provider's own word for why the model stopped ("refusal", "SAFETY"), when it said one. */
      rawFinishReason?: string;
    }
  /** Interrupted: what was streamed before the abort. */
  | { kind: "aborted"; text: string };

/** A request that failed; `text` is what of its answer reached the user (then it must not be retried). */
export class StepError extends Error {
  override name = "StepError";
  constructor(
    readonly error: unknown,
    readonly text: string,
  ) {
    super(error instanceof Error ? error.message : String(error));
  }

  get streamed(): boolean {
    return this.text !== "";
  }
}

/**
 * The provider went quiet: nothing arrived for `idle_timeout_ms`. (The SDK's own chunk timeout only starts after
 * the first chunk, so a provider that never answers would hang the turn.)
 */
export class IdleTimeoutError extends Error {
  override name = "TimeoutError";
}

/**
 * The stream ended without the model's finish: no finish reason came. The SDK still ends the step, as "other", so
 * a cut answer would pass for a whole one.
 */
export class UnfinishedStreamError extends Error {
  override name = "UnfinishedStreamError";
}

const UNFINISHED = "the stream ended before the model finished (it sent no finish reason)";

/** The model wrote more in one answer than any model can: a broken provider or proxy streaming without end. */
export class OversizeAnswerError extends Error {
  override name = "OversizeAnswerError";
}

/**
 * Characters of text, reasoning and tool arguments one turn's answers may stream by default (options.max_turn_chars).
 * Without a cap a provider streaming forever grows Brain's memory until an interrupt.
 */
export const MAX_ANSWER_CHARS = DEFAULTS.maxTurnChars;

export async function streamStep(req: StepRequest): Promise<StepOutcome> {
  const { settings } = req;
  const idle = new AbortController();
  let idleTimer: NodeJS.Timeout | undefined;
  const stillAlive = () => {
    clearTimeout(idleTimer);
    idleTimer = setTimeout(() => idle.abort(), settings.idleTimeoutMs);
  };
  stillAlive();
  try {
    return await consume(req, idle.signal, stillAlive);
  } finally {
    clearTimeout(idleTimer);
  }
}

async function consume(req: StepRequest, idle: AbortSignal, stillAlive: () => void): Promise<StepOutcome> {
  const { settings } = req;
  const oversize = new AbortController();
  // Counted over the turn: each of its steps within the bound, a turn of many steps could grow without one.
  const streamed = req.streamed ?? { chars: 0 };
  const count = (chars: number) => {
    streamed.chars += chars;
    if (streamed.chars > settings.maxTurnChars) oversize.abort();
  };
  const result = streamText({
    model: req.model,
    ...(req.system ? { system: req.system } : {}),
    messages: req.messages,
    tools: req.tools,
    ...(req.toolChoice ? { toolChoice: req.toolChoice } : {}),
    ...(settings.maxOutputTokens === undefined ? {} : { maxOutputTokens: settings.maxOutputTokens }),
    ...(settings.temperature === undefined ? {} : { temperature: settings.temperature }),
    ...(req.providerOptions ? { providerOptions: req.providerOptions } : {}),
    // Retries are the turn loop's, so they can be reported and never repeat text already streamed.
    maxRetries: 0,
    abortSignal: AbortSignal.any([req.signal, idle, oversize.signal]),
    // Errors come back as stream parts and are handled there; the default would also print them.
    onError: () => {},
    ...(req.refusalsInRaw ? { includeRawChunks: true } : {}),
  });
  let text = "";
  let refused = "";
  const toolCalls: StepToolCall[] = [];
  const ids = new CallIds();
  let failure: unknown;
  let usage: LanguageModelUsage | undefined;
  let providerMetadata: ProviderMetadata | undefined;
  let finishReason: FinishReason = "other";
  let rawFinishReason: string | undefined;
  const tellFirstEvents = () => {
    for (const type of req.unknownFirstEvents?.() ?? []) req.onUnknownEvent(type);
  };
  try {
    for await (const part of result.fullStream) {
      stillAlive();
      tellFirstEvents();
      // A refusal is the model's whole answer: dropped, the turn would end in silence, saying nothing of why.
      const piece =
        part.type === "text-delta" ? part.text : part.type === "raw" ? refusalIn(part.rawValue) : "";
      if (piece !== "") {
        count(piece.length);
        if (oversize.signal.aborted) break;
        if (part.type === "raw") refused += piece;
        text += piece;
        req.onDelta(piece);
      } else if (part.type === "reasoning-delta") {
        count(part.text.length);
      } else if (part.type === "tool-input-delta") {
        count(part.delta.length);
      } else if (part.type === "tool-call") {
        toolCalls.push({ id: ids.next(part.toolCallId), name: part.toolName, input: part.input });
      } else if (part.type === "start-step") {
        for (const warning of part.warnings) req.onWarning(describeWarning(warning));
      } else if (part.type === "finish-step") {
        usage = part.usage;
        providerMetadata = part.providerMetadata;
        finishReason = part.finishReason;
        rawFinishReason = part.rawFinishReason;
      } else if (part.type === "error") {
        const unknown = unknownEventType(part.error);
        if (unknown !== undefined) {
          req.onUnknownEvent(unknown);
          continue;
        }
        failure = part.error;
        break;
      } else if (part.type === "abort") {
        break;
      }
    }
  } catch (err) {
    failure = err;
  }
  tellFirstEvents();
  if (req.signal.aborted) {
    Promise.resolve(result.response).catch(() => {});
    return { kind: "aborted", text };
  }
  if (oversize.signal.aborted) {
    Promise.resolve(result.response).catch(() => {});
    throw new StepError(
      new OversizeAnswerError(
        `streamed over ${charCount(settings.maxTurnChars)} characters (text, reasoning and tool arguments) in this ` +
          "turn, the bound config.options.max_turn_chars sets; stopped (raise it for longer turns, or check the " +
          "provider, or the proxy at its base URL)",
      ),
      text,
    );
  }
  if (idle.aborted) {
    Promise.resolve(result.response).catch(() => {});
    const seconds = settings.idleTimeoutMs / 1000;
    throw new StepError(
      new IdleTimeoutError(`nothing arrived for ${seconds} s (config.options.idle_timeout_ms)`),
      text,
    );
  }
  if (failure === undefined && (!usage || unfinished(finishReason, rawFinishReason))) {
    const said = req.streamError?.();
    // As the other SDKs hand on an error they were streamed: the provider's body, {message}. It carries no type to
    // judge by, but Ollama refuses a bad request with an HTTP status before its 200: an error after it is the model
    // runner failing (crashed, out of memory), worth another try while nothing of the answer was shown.
    if (said !== undefined) failure = { message: said, isRetryable: true };
  }
  // A stream that ended before its first event (Anthropic's package then ends without a finish part):
  // the SDK's "No output generated" says less than the unfinished stream it is, as the other packages have it told.
  if (NoOutputGeneratedError.isInstance(failure)) failure = new UnfinishedStreamError(UNFINISHED);
  if (failure !== undefined || !usage) {
    Promise.resolve(result.response).catch(() => {});
    throw new StepError(failure ?? new Error("the stream ended without finishing"), text);
  }
  if (unfinished(finishReason, rawFinishReason)) {
    throw new StepError(new UnfinishedStreamError(UNFINISHED), text);
  }
  const response = await result.response;
  return {
    kind: "done",
    text,
    toolCalls,
    // The tools have no `execute`, so the SDK's tool messages hold only its own errors for calls it could not
    // parse (arguments that are not JSON, a tool not offered): Brain answers every call itself, and a provider
    // refuses a call answered twice.
    messages: withRefusal(
      ids.applied(response.messages.filter((message) => message.role !== "tool")),
      refused,
    ),
    usage,
    providerMetadata,
    finishReason,
    ...(rawFinishReason === undefined ? {} : { rawFinishReason }),
  };
}

/** The refusal a Chat Completions chunk streams in its first choice's delta, or "". */
function refusalIn(chunk: unknown): string {
  const choices = (chunk as { choices?: unknown } | null)?.choices;
  const delta = Array.isArray(choices)
    ? (choices[0] as { delta?: { refusal?: unknown } } | null)?.delta
    : undefined;
  return typeof delta?.refusal === "string" ? delta.refusal : "";
}

/** The assistant message with the refusal its SDK package left out, so the next request holds what was shown. */
function withRefusal(messages: ModelMessage[], refused: string): ModelMessage[] {
  if (refused === "") return messages;
  const at = messages.findLastIndex((message) => message.role === "assistant");
  const message = messages[at];
  if (message?.role !== "assistant") return [...messages, { role: "assistant", content: refused }];
  const content =
    typeof message.content === "string"
      ? message.content + refused
      : [...message.content, { type: "text" as const, text: refused }];
  return messages.map((m, i) => (i === at ? { ...message, content } : m));
}

/**
 * Each call of one answer under an id of its own. A server may give two calls the same id, or none ("": some
 * OpenAI-compatible servers): the assistant message would then hold it twice, which Anthropic refuses ("tool_use ids
 * must be unique") and every later request carries, and Brain would answer only one of the calls. Such a call gets a
 * fresh id, in the calls and in the assistant message alike (the k-th call there is the k-th call streamed).
 */
class CallIds {
  private readonly streamed: string[] = [];
  private readonly given: string[] = [];
  private readonly taken = new Set<string>();

  next(id: string): string {
    let own = id;
    for (let n = 2; own === "" || this.taken.has(own); n++) own = `${id.slice(0, 32) || "call"}_${n}`;
    this.taken.add(own);
    this.streamed.push(id);
    this.given.push(own);
    return own;
  }

  applied(messages: ModelMessage[]): ModelMessage[] {
    if (this.given.every((id, i) => id === this.streamed[i])) return messages;
    let index = 0;
    return messages.map((message) => {
      if (message.role !== "assistant" || typeof message.content === "string") return message;
      const content = message.content.map((part) =>
        part.type === "tool-call" ? { ...part, toolCallId: this.given[index++] ?? part.toolCallId } : part,
      );
      return { ...message, content };
    });
  }
}

/**
 * Every provider says why the model stopped: Anthropic's stop_reason, OpenAI's finish_reason (the Responses API:
 * response.completed, whose reason is "stop" or "tool-calls" unless incomplete), Gemini's finishReason, Ollama's
 * done_reason. "other" with no reason of the provider's own is the SDK's default for a stream that never said.
 * (Not usage: Gemini reports it in every chunk.)
 */
function unfinished(reason: FinishReason, raw: string | undefined): boolean {
  return reason === "other" && raw === undefined;
}

function describeWarning(warning: unknown): string {
  const w = warning as {
    type?: string;
    message?: string;
    feature?: string;
    details?: string;
    setting?: string;
  };
  if (w.message) return w.message;
  const what = w.feature ?? w.setting ?? "a setting";
  return `${what} is not supported by this model${w.details ? `: ${w.details}` : ""}`;
}

/** A count of characters as the error says it: in Mi when it is a whole number of them. */
const charCount = (n: number) => (n % 2 ** 20 === 0 ? `${n / 2 ** 20} Mi` : `${n}`);
