// The api harness: Brain's own model loop, in process, on the Vercel AI SDK. Its native state is the
// conversation file; its tools are Brain's bound tools, every call going through Brain's tool callback.

import { join } from "node:path";
import type { ProviderMetadata, ToolSet } from "ai";
import {
  type ExpectedHistory,
  type Harness,
  HarnessError,
  type HarnessOptions,
  type NativeFile,
  type PromptOutcome,
  type TurnContext,
} from "../../core/harness.js";
import { missingHistory } from "../../core/native-check.js";
import { Redactor } from "../../core/redact.js";
import { CONVERSATION_FILE, Conversation } from "./conversation.js";
import { conversationReadLimit } from "./conversation-file.js";
import { ImageError, loadImages } from "./images.js";
import type { ResolvedModel } from "./providers.js";
import type { ApiSettings } from "./settings.js";
import { toToolSet } from "./tools.js";
import { runTurn } from "./turn.js";

interface Running {
  turn: string;
  abort: AbortController;
}

export class ApiHarness implements Harness {
  private readonly conversation: Conversation;
  private readonly tools: ToolSet;
  private readonly steers: string[] = [];
  private readonly warned = new Set<string>();
  private running: Running | undefined;

  constructor(
    private readonly options: HarnessOptions,
    private readonly model: ResolvedModel,
    private readonly settings: ApiSettings,
  ) {
    // Passive open: the conversation is read from disk, nothing is sent anywhere.
    try {
      this.conversation = new Conversation(
        options.dir,
        conversationReadLimit(settings.compactAtTokens),
        options.redact
          ? { redactDeep: options.redact }
          : new Redactor(model.apiKey ? [{ name: "provider_key", value: model.apiKey }] : []),
      );
    } catch (err) {
      throw new HarnessError("brain_error", `cannot read the conversation file: ${(err as Error).message}`);
    }
    this.tools = toToolSet(options.tools);
    if (this.conversation.damaged.length > 0) {
      this.warn(
        `skipped ${this.conversation.damaged.length} unreadable line(s) of the conversation file (a torn write?)`,
      );
    }
  }

  async verify(expected: ExpectedHistory): Promise<string | undefined> {
    const file = join(this.options.dir, CONVERSATION_FILE);
    return missingHistory("the api harness's conversation file", this.options.dir, [file], expected);
  }

  async prompt(text: string, ctx: TurnContext): Promise<PromptOutcome> {
    if (this.running) throw new HarnessError("brain_error", `turn ${this.running.turn} is still running`);
    const running: Running = { turn: ctx.turn, abort: new AbortController() };
    this.running = running;
    // Once per turn, not per harness: a later turn's max_steps stop, failed compaction or retry is its own news.
    this.warned.clear();
    const signal = AbortSignal.any([ctx.signal, running.abort.signal]);
    try {
      let images: Awaited<ReturnType<typeof loadImages>>;
      try {
        images = await loadImages(ctx.images);
      } catch (err) {
        if (err instanceof ImageError) throw new HarnessError("brain_error", err.message);
        throw err;
      }
      const outcome = await runTurn(
        {
          conversation: this.conversation,
          model: this.model,
          ...(this.options.config.system_prompt ? { system: this.options.config.system_prompt } : {}),
          tools: this.tools,
          settings: this.settings,
          ...providerOptions(this.model.provider, this.settings.reasoning),
          options: this.options,
          steers: this.steers,
          warn: (message) => this.warn(message, ctx.turn),
          turn: ctx.turn,
        },
        { turn: ctx.turn, text, images, signal },
      );
      return { interrupted: outcome.interrupted || signal.aborted };
    } finally {
      this.running = undefined;
      // A steer that came in after the last step boundary was logged: it joins the conversation for next time.
      await this.saveLeftoverSteers().catch(() => {});
      await this.conversation.sync().catch(() => {});
    }
  }

  /** Joins the running turn at its next step boundary; after the turn, the conversation for the next one. */
  async steer(text: string, turn: string): Promise<void> {
    this.steers.push(text);
    if (this.running?.turn !== turn) await this.saveLeftoverSteers();
  }

  async interrupt(turn: string): Promise<void> {
    if (this.running?.turn === turn) this.running.abort.abort();
  }

  async checkpoint(): Promise<NativeFile[]> {
    return this.conversation.checkpoint();
  }

  async close(): Promise<void> {
    this.running?.abort.abort();
    await this.conversation.close();
    await this.model.close();
  }

  private async saveLeftoverSteers(): Promise<void> {
    if (this.running) return;
    for (const steer of this.steers.splice(0)) {
      await this.conversation.append({ type: "message", message: { role: "user", content: steer } });
    }
  }

  /** Each distinct warning once per turn, so a per-request SDK warning does not flood the log. */
  private warn(message: string, turn?: string): void {
    if (this.warned.has(message)) return;
    this.warned.add(message);
    this.options.emit({ type: "harness.warning", ...(turn ? { turn } : {}), data: { message } });
  }
}

/**
 * Brain keeps the whole conversation and sends it every time, so OpenAI need not store responses (with `store`,
 * the SDK would send references to stored items instead, which a restore on another account could not resolve).
 * Under `store: false` the SDK asks for encrypted reasoning only from the models its own list calls reasoning
 * models: `forceReasoning` (options.reasoning) names the others, whose reasoning would otherwise be dropped from
 * the next request (and a tool call that followed it refused).
 */
function providerOptions(
  provider: string,
  reasoning: boolean | undefined,
): { providerOptions?: ProviderMetadata } {
  const force = reasoning === undefined ? {} : { forceReasoning: reasoning };
  if (provider === "openai") return { providerOptions: { openai: { store: false, ...force } } };
  if (provider === "openai-chat" && reasoning !== undefined) return { providerOptions: { openai: force } };
  return {};
}
