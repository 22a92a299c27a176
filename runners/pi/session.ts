// One attachment: pi's Agent on the conversation in the native dir. Every message pi finishes is appended to
// the transcript as it ends; the agent's memory is reset from the transcript after every turn, so what the
// model sees next is always exactly what a fresh process would rebuild from the file.
import { Agent, type AgentEvent } from "@mariozechner/pi-agent-core";
import type { AssistantMessage, Message, SimpleStreamOptions } from "@mariozechner/pi-ai";
import {
  type Attachment,
  type NativeFile,
  type OpenParams,
  type PromptResult,
  providerError,
  RunnerFailure,
  type Turn,
} from "../../sdk/ts/index.js";
import { Redactor } from "../../src/core/redact.js";
import { chooseCut, contextTokens, needsCompaction, summarize } from "./compaction.js";
import { messageEvent } from "./events.js";
import { requestOptions, restoreToolSchemas, streamFn } from "./provider.js";
import { type PiSettings, readSettings } from "./settings.js";
import { type HostToolDetails, hostTool, hostTools } from "./tools.js";
import { TRANSCRIPT, Transcript } from "./transcript.js";
import type { Warmer } from "./warm.js";

export type Log = (message: string) => void;

/** Opens an attachment: reads the settings and the transcript, and calls nobody (passive open). */
export function openPiSession(params: OpenParams, log: Log, warmer?: Warmer): PiSession {
  const settings = readSettings(params);
  warmer?.opened(settings.model.api);
  if (settings.ignoredOptions.length > 0) {
    log(`runner pi: ignoring options it does not know: ${settings.ignoredOptions.join(", ")}`);
  }
  return new PiSession(params, settings, log);
}

export class PiSession implements Attachment {
  readonly metadata: Record<string, unknown>;
  private readonly agent: Agent;
  private readonly transcript: Transcript;
  private readonly request: SimpleStreamOptions;
  /** Messages written to the transcript: a message the agent ends a run with that is not here was never reported. */
  private readonly recorded = new WeakSet<object>();
  private turn: Turn | undefined;
  /** The runner's own failure during the current turn (the disk, a broken loop): the turn fails with it. */
  private failure: RunnerFailure | undefined;
  /**
   * The key in every form, kept out of the transcript: a provider's error may quote the key it was sent, and a
   * native file holding it is refused by every checkpoint (and so fork) of the session.
   */
  private readonly redactor: Redactor;
  /** The current turn's latest model reply: when it failed, the turn fails with the provider's message. */
  private lastReply: AssistantMessage | undefined;

  constructor(
    params: OpenParams,
    private readonly settings: PiSettings,
    private readonly log: Log,
  ) {
    this.transcript = new Transcript(params.dir, log);
    this.redactor = new Redactor(settings.apiKey ? [{ name: "api_key", value: settings.apiKey }] : []);
    this.request = requestOptions(settings, this.transcript.id);
    const messages = this.transcript.context().messages;
    this.agent = new Agent({
      initialState: {
        systemPrompt: settings.systemPrompt,
        model: settings.model,
        thinkingLevel: settings.options.thinking,
        tools: hostTools(params.tools, () => this.turn),
        messages,
      },
      streamFn: streamFn(this.request, params.tools, (name) => hostTool({ name }, () => this.turn)),
      onPayload: restoreToolSchemas(params.tools),
      afterToolCall: async ({ result }) =>
        (result.details as HostToolDetails | undefined)?.isError ? { isError: true } : undefined,
      // Every steer queued when the model finishes a step joins the conversation together.
      steeringMode: "all",
      toolExecution: settings.options.tool_execution,
    });
    this.agent.subscribe((event) => this.onEvent(event));
    this.metadata = {
      tools: params.tools.map((t) => t.name),
      model: settings.model.id,
      api: settings.model.api,
      messages: messages.length,
    };
  }

  async prompt(text: string, turn: Turn): Promise<PromptResult> {
    if (turn.signal.aborted) return { interrupted: true };
    this.turn = turn;
    this.failure = undefined;
    this.lastReply = undefined;
    const stop = () => {
      this.agent.abort();
      this.agent.clearSteeringQueue();
    };
    turn.signal.addEventListener("abort", stop, { once: true });
    try {
      let run = () => this.agent.prompt(text);
      for (;;) {
        await run();
        if (!this.wentWell(turn)) break;
        if (!this.agent.hasQueuedMessages()) await this.compactIfNeeded(turn);
        // A steer that arrived after the agent last looked at its queue still belongs to this turn.
        if (turn.signal.aborted || !this.agent.hasQueuedMessages()) break;
        run = () => this.agent.continue();
      }
      if (this.failure) throw this.failure;
      if (turn.signal.aborted) return { interrupted: true };
      const error = this.replyError();
      // pi-ai's own words ("Connection error.", "fetch failed") do not say which endpoint: the operator's fix
      // (a base_url, a server down) starts there.
      if (error !== undefined) throw providerError(`${error} (provider at ${this.settings.model.baseUrl})`);
      return {};
    } finally {
      turn.signal.removeEventListener("abort", stop);
      this.turn = undefined;
      this.agent.state.messages = this.transcript.context().messages;
    }
  }

  /** Steering joins at the next model boundary: after the current reply (and its tool calls) finished. */
  steer(text: string, turn: Turn): void {
    if (turn.signal.aborted) return;
    this.agent.steer({ role: "user", content: [{ type: "text", text }], timestamp: Date.now() });
  }

  checkpoint(): NativeFile[] {
    return this.transcript.file();
  }

  detach(): void {
    this.agent.abort();
  }

  private wentWell(turn: Turn): boolean {
    return !this.failure && !turn.signal.aborted && this.replyError() === undefined;
  }

  /** The provider's message when the turn's latest model reply failed. */
  private replyError(): string | undefined {
    const reply = this.lastReply;
    if (reply?.stopReason !== "error") return undefined;
    return reply.errorMessage ?? "the provider failed without a message";
  }

  /** pi awaits listeners and must never see one throw: every failure here becomes the turn's brain_error. */
  private async onEvent(event: AgentEvent): Promise<void> {
    try {
      if (event.type === "message_update") {
        const update = event.assistantMessageEvent;
        if (update.type === "text_delta") this.turn?.delta(update.delta);
      } else if (event.type === "message_end") {
        this.record(event.message);
      } else if (event.type === "agent_end") {
        // When pi's loop itself throws, it ends the run with a made-up message it never reports as ended.
        const last = event.messages.at(-1);
        if (last && !this.recorded.has(last) && last.role === "assistant") {
          this.fail(`pi's agent loop failed: ${last.errorMessage ?? "unknown error"}`);
        }
      }
    } catch (err) {
      this.fail((err as Error).message);
    }
  }

  private record(message: Message): void {
    try {
      this.transcript.appendMessage(this.redactor.redactDeep(message));
    } catch (err) {
      return this.fail(`could not append to ${TRANSCRIPT}: ${(err as Error).message}`);
    }
    this.recorded.add(message);
    if (message.role !== "assistant") return;
    this.lastReply = message;
    const data = messageEvent(message);
    if (data) this.turn?.message(data);
  }

  private fail(message: string): void {
    this.failure ??= new RunnerFailure("brain_error", message);
    this.agent.abort();
  }

  /**
   * Between steps of a finished turn: when the context passed the threshold, summarize all but the recent part
   * and append the compaction. A failed summary leaves the conversation as it is (the turn already succeeded).
   */
  private async compactIfNeeded(turn: Turn): Promise<void> {
    const { messages, ordinals } = this.transcript.context();
    if (!needsCompaction(messages, this.settings.compaction)) return;
    const cut = chooseCut(messages, this.settings.compaction.keepTokens);
    const firstKept = cut === undefined ? undefined : ordinals[cut];
    // Only the previous summary before the cut: summarizing it again gains nothing.
    if (
      cut === undefined ||
      firstKept === undefined ||
      ordinals.slice(0, cut).every((o) => o === undefined)
    ) {
      return;
    }
    try {
      const { summary } = await summarize(this.settings.model, messages.slice(0, cut), {
        ...this.request,
        signal: turn.signal,
      });
      const tokens = contextTokens(messages);
      // The model's summary may repeat the key the conversation held: it goes through the messages' redactor.
      this.transcript.appendCompaction({
        summary: this.redactor.redact(summary),
        first_kept: firstKept,
        tokens_before: tokens,
        timestamp: Date.now(),
      });
      this.agent.state.messages = this.transcript.context().messages;
    } catch (err) {
      if (!turn.signal.aborted)
        this.log(
          `runner pi: compaction failed, nothing changed: ${this.redactor.redact((err as Error).message)}`,
        );
    }
  }
}
