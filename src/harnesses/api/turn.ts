// One user turn on the api harness: request, stream, hand the tool calls to Brain, repeat until the model
// answers in text. Steering joins at the next step boundary; an interrupt stops the request or the waiting
// tools and settles the turn as interrupted; provider failures are retried (bounded) and then fail the turn.
import type { FinishReason, ModelMessage, ProviderMetadata, ToolSet, UserContent } from "ai";
import { HarnessError, type HarnessOptions, type PromptOutcome } from "../../core/harness.js";
import { sleep } from "../../core/sleep.js";
import type { ToolResult, Usage } from "../../protocol/runner.js";
import { MAX_TOOL_CALLS_IN_FLIGHT } from "../process/call-places.js";
import { Semaphore } from "../process/semaphore.js";
import { SUMMARY_RESULT_CHARS, shouldCompact, summaryRequest } from "./compaction.js";
import { type Conversation, withBoundedResults } from "./conversation.js";
import { backoffMs, describeProviderError, isRetryable, passingHint, waitTooLong } from "./errors.js";
import type { LoadedImage } from "./images.js";
import type { ResolvedModel } from "./providers.js";
import type { ApiSettings } from "./settings.js";
import { StepError, type StepOutcome, streamStep } from "./step.js";
import { errorResult, toCallParams, toolMessage } from "./tools.js";
import { TurnUsage } from "./usage.js";

export interface TurnDeps {
  conversation: Conversation;
  model: ResolvedModel;
  system?: string;
  tools: ToolSet;
  settings: ApiSettings;
  providerOptions?: ProviderMetadata;
  options: HarnessOptions;
  /** Steering texts waiting for the next step boundary (the harness pushes, the loop drains). */
  steers: string[];
  warn(message: string): void;
  /** The turn, for the events the loop itself emits. */
  turn?: string;
}

export interface TurnInput {
  turn: string;
  text: string;
  images: LoadedImage[];
  signal: AbortSignal;
}

export async function runTurn(deps: TurnDeps, input: TurnInput): Promise<PromptOutcome> {
  const usage = new TurnUsage(deps.settings.price);
  try {
    const outcome = await runSteps(deps, input, usage);
    if (outcome.interrupted) reportSpent(deps, input.turn, usage, "interrupted");
    return outcome;
  } catch (err) {
    reportSpent(deps, input.turn, usage, "error");
    throw err;
  }
}

/**
 * Tokens the turn spent that no message reported (a request with tool calls, a compaction, before the turn failed
 * or was interrupted): a message of no text carries them, as a CLI's tool-use message does, so no usage is lost.
 */
function reportSpent(
  deps: TurnDeps,
  turn: string,
  usage: TurnUsage,
  stopReason: "interrupted" | "error",
): void {
  const spent = usage.take();
  if (spent)
    deps.options.emit({
      type: "assistant.message",
      turn,
      data: { text: "", usage: spent, stop_reason: stopReason },
    });
}

async function runSteps(deps: TurnDeps, input: TurnInput, usage: TurnUsage): Promise<PromptOutcome> {
  const { conversation, settings, options } = deps;
  const { turn, signal } = input;
  await compactIfLarge(deps, usage, signal);
  // What a request adds (the prompt, steers) is saved once the provider has answered it. A turn that fails before
  // any answer is left out, as the log's transcript leaves it out (answeredOnly): a prompt the provider refuses for
  // what it holds (too long, say) would otherwise go with every later request and fail each the same way.
  const unsaved: ModelMessage[] = [userMessage(input.text, input.images)];
  await written(conversation.writable());
  const saveUnsaved = async () => {
    if (unsaved.length === 0) return;
    await save(conversation, ...unsaved.splice(0).map((message) => ({ type: "message" as const, message })));
  };
  // Interrupted while the model summarised: the prompt is kept, as an interrupt of the turn's own request keeps it
  // (the log's transcript keeps an interrupted turn's prompt).
  if (signal.aborted) {
    await saveUnsaved();
    return { interrupted: true };
  }

  let lastText = "";
  const streamed = { chars: 0 };
  for (let step = 0; step < settings.maxSteps; step++) {
    for (const steer of deps.steers.splice(0)) unsaved.push({ role: "user", content: steer });
    let outcome: StepOutcome;
    try {
      outcome = await request(
        deps,
        [...conversation.messages(), ...unsaved],
        signal,
        (text) => options.emit({ type: "assistant.delta", turn, data: { text } }),
        undefined,
        streamed,
      );
    } catch (err) {
      // Left out only while the turn is unanswered (its first request, nothing streamed). The provider's failure
      // stays the turn's error; a conversation that cannot be written shows next turn.
      if (step > 0 || err instanceof BrokenAnswer) await saveUnsaved().catch(() => {});
      // Its steers with it (the transcript leaves them out too): kept, they would reach the next request without
      // the prompt they steer.
      else deps.steers.splice(0);
      if (err instanceof BrokenAnswer)
        await keepUnfinished(deps, turn, err.text, usage, "error").catch(() => {});
      throw err;
    }
    await saveUnsaved();
    if (outcome.kind === "aborted") {
      await keepUnfinished(deps, turn, outcome.text, usage, "interrupted");
      return { interrupted: true };
    }
    const stepUsage = usage.add(outcome.usage, outcome.providerMetadata);
    await save(
      conversation,
      ...outcome.messages.map((message, i) => ({
        type: "message" as const,
        message,
        ...(i === outcome.messages.length - 1 ? { usage: stepUsage } : {}),
      })),
    );
    lastText = outcome.text;
    if (outcome.toolCalls.length === 0) {
      // A plain "stop" with no text is the model choosing to say nothing more (after its tools, say): no news.
      if (outcome.text.trim() === "" && outcome.finishReason !== "stop") {
        deps.warn(emptyAnswer(outcome.finishReason, outcome.rawFinishReason));
      }
      const data = { text: outcome.text, ...spentSince(usage), stop_reason: outcome.finishReason };
      options.emit({ type: "assistant.message", turn, data });
      // A steer that came in during the final answer still gets an answer of its own.
      if (deps.steers.length === 0) return { interrupted: false };
      continue;
    }
    // As many at once as a runner may have (seed A): a model asking for hundreds of commands in one answer must not
    // start them all on the host together.
    const places = new Semaphore(MAX_TOOL_CALLS_IN_FLIGHT);
    const results = await Promise.all(
      outcome.toolCalls.map((call): Promise<ToolResult> => {
        const params = toCallParams(call);
        if (typeof params !== "string")
          return places.run(() =>
            signal.aborted
              ? Promise.resolve(errorResult("not run: the turn was interrupted"))
              : options.call(turn, params, signal),
          );
        // Never logged as a tool.call (the log takes only object arguments): the log says what the model was told.
        deps.warn(`tool call "${call.id}" (${call.name}) was not run: ${params}`);
        return Promise.resolve(errorResult(params));
      }),
    );
    // Every call gets its result, cancelled ones included: the next request must be well formed.
    await save(conversation, { type: "message", message: toolMessage(outcome.toolCalls, results) });
    if (signal.aborted) return { interrupted: true };
  }
  deps.warn(
    `the turn stopped after ${settings.maxSteps} model requests (config.options.max_steps) with tool calls still coming`,
  );
  options.emit({
    type: "assistant.message",
    turn,
    data: { text: lastText, ...spentSince(usage), stop_reason: "max_steps" },
  });
  return { interrupted: false };
}

/**
 * A request that failed after some of its answer reached the user. The text goes into the conversation all the
 * same (as an interrupted answer's does), so the model's next request holds what the user saw.
 */
class BrokenAnswer extends HarnessError {
  constructor(
    message: string,
    readonly text: string,
  ) {
    super("provider_error", message);
  }
}

/** Keeps the text of an answer that did not finish, interrupted or failed, as the assistant's message. */
async function keepUnfinished(
  deps: TurnDeps,
  turn: string,
  text: string,
  usage: TurnUsage,
  stopReason: "interrupted" | "error",
): Promise<void> {
  if (!text) return;
  await save(deps.conversation, { type: "message", message: { role: "assistant", content: text } });
  const data = { text, ...spentSince(usage), stop_reason: stopReason };
  deps.options.emit({ type: "assistant.message", turn, data });
}

/**
 * An answer of no text ends the turn with nothing to show: the reason the provider stopped the model (a refusal, a
 * safety filter, a malformed call) is the only word of why, and the SDK's finish reason alone ("other") says none.
 */
function emptyAnswer(finishReason: FinishReason, raw: string | undefined): string {
  const said = raw !== undefined && raw !== finishReason ? ` (the provider's "${raw}")` : "";
  return `the model's answer was empty: it stopped with finish reason "${finishReason}"${said}`;
}

/** The usage field of a message: what was spent since the last message, if anything was. */
function spentSince(usage: TurnUsage): { usage?: Usage } {
  const spent = usage.take();
  return spent ? { usage: spent } : {};
}

function userMessage(text: string, images: LoadedImage[]): ModelMessage {
  if (images.length === 0) return { role: "user", content: text };
  const content: UserContent = [{ type: "text", text }];
  for (const image of images) content.push({ type: "image", image: image.data, mediaType: image.mimeType });
  return { role: "user", content };
}

/** One model request, retried with backoff while the failure is retryable and nothing has been streamed. */
async function request(
  deps: TurnDeps,
  messages: ModelMessage[],
  signal: AbortSignal,
  onDelta: (text: string) => void,
  toolChoice?: "none",
  streamed?: { chars: number },
): Promise<StepOutcome> {
  const { settings, model } = deps;
  for (let attempt = 0; ; attempt++) {
    try {
      return await streamStep({
        model: model.model,
        ...(deps.system ? { system: deps.system } : {}),
        messages,
        tools: deps.tools,
        ...(toolChoice ? { toolChoice } : {}),
        settings,
        ...(deps.providerOptions ? { providerOptions: deps.providerOptions } : {}),
        signal,
        onDelta,
        onWarning: (message) => deps.warn(message),
        onUnknownEvent: (type) =>
          deps.warn(
            `${model.provider} sent a stream event this version of Brain does not know (${type}); passed over it`,
          ),
        ...(model.streamError ? { streamError: model.streamError } : {}),
        ...(model.unknownFirstEvents ? { unknownFirstEvents: model.unknownFirstEvents } : {}),
        ...(model.refusalsInRaw ? { refusalsInRaw: true } : {}),
        ...(streamed ? { streamed } : {}),
      });
    } catch (err) {
      if (!(err instanceof StepError)) throw err;
      const why = model.withoutKeyEcho(describeProviderError(model, err.error));
      const tries = attempt > 0 ? ` (after ${attempt + 1} attempts)` : "";
      if (err.streamed) throw new BrokenAnswer(`${why}${tries}`, err.text);
      if (!isRetryable(err.error) || attempt >= settings.retries) {
        throw new HarnessError("provider_error", `${why}${tries}${passingHint(err.error, settings.retries)}`);
      }
      const tooLong = waitTooLong(err.error);
      if (tooLong) throw new HarnessError("provider_error", `${why}${tries}${tooLong}`);
      const wait = backoffMs(attempt, settings.retryBaseMs, err.error);
      deps.warn(
        `${why}; retrying in ${(wait / 1000).toFixed(1)} s (retry ${attempt + 1} of ${settings.retries})`,
      );
      if (!(await sleep(wait, signal))) return { kind: "aborted", text: "" };
    }
  }
}

/** Summarises the conversation when the next request would be at least `compact_at_tokens` long. */
async function compactIfLarge(deps: TurnDeps, usage: TurnUsage, signal: AbortSignal): Promise<void> {
  const { conversation, settings } = deps;
  if (!shouldCompact(conversation.estimatedInputTokens(), settings.compactAtTokens, conversation.length))
    return;
  // The tools stay declared (some providers refuse tool calls in the history otherwise), but none may run.
  const summarise = (context: ModelMessage[]) =>
    request(deps, summaryRequest(context), signal, () => {}, "none");
  const context = conversation.messages();
  let outcome: StepOutcome;
  try {
    outcome = await summarise(context);
  } catch (err) {
    // A conversation already past the model's context (the last turn failed on it) fails its summary as well, and
    // would fail every turn after: once more with the tool results, its bulk, cut short.
    const shorter = withBoundedResults(context, SUMMARY_RESULT_CHARS);
    try {
      if (shorter === context || signal.aborted) throw err;
      outcome = await summarise(shorter);
    } catch (again) {
      // The turn goes on uncompacted: the request may still fit, and if not it fails with the provider's word.
      deps.warn(`compacting the conversation failed, going on without: ${(again as Error).message}`);
      return;
    }
  }
  if (outcome.kind === "aborted") return;
  usage.add(outcome.usage, outcome.providerMetadata);
  const flaw = summaryFlaw(outcome.text, outcome.finishReason);
  if (flaw) {
    deps.warn(`compacting the conversation failed, going on without: ${flaw}`);
    return;
  }
  await save(conversation, { type: "compaction", summary: outcome.text });
  const turn = deps.turn ? { turn: deps.turn } : {};
  deps.options.emit({ type: "context.compacted", ...turn, data: { summary: outcome.text } });
  deps.warn(
    `the conversation was compacted: ${conversation.length - 1} entries summarised in ${outcome.text.length} characters`,
  );
}

/**
 * Why a summary must not be kept, if it must not: it stands in for everything before it from then on, so one that
 * is empty or stopped short (at the output limit, say) would lose what it left out for good.
 */
function summaryFlaw(text: string, finishReason: FinishReason): string | undefined {
  if (text.trim() === "") return "the model's summary was empty";
  if (finishReason !== "stop") return `the model's summary stopped short (finish reason "${finishReason}")`;
  return undefined;
}

function save(conversation: Conversation, ...entries: Parameters<Conversation["append"]>): Promise<void> {
  return written(conversation.append(...entries));
}

/** A write of the conversation file; its failure fails the turn as Brain's. */
async function written(write: Promise<void>): Promise<void> {
  try {
    await write;
  } catch (err) {
    throw new HarnessError("brain_error", `could not write the conversation file: ${(err as Error).message}`);
  }
}
