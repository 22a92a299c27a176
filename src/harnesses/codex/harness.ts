// One Codex session: `codex app-server` (JSON-RPC on stdio), started at the first prompt (opening is passive) and
// again whenever it has gone away, then `thread/start`, or `thread/resume` with the current cwd for a thread
// this native dir already holds (also after a restore into another directory). Prompts are `turn/start`,
// steering is `turn/steer`, interrupts are `turn/interrupt`; approvals and questions go through Brain.
import { join } from "node:path";
import { type ExpectedHistory, HarnessError } from "../../core/harness.js";
import type { NativeFile } from "../../protocol/runner.js";
import { makeAgentDirSync, writeAgentFileSync } from "../agent-files.js";
import { isMcpEndpointTool } from "../cli/bound.js";
import type { CliProcess } from "../cli/child.js";
import { withTail } from "../cli/child.js";
import type { CliOpening } from "../cli/family.js";
import { listNativeFiles } from "../cli/files.js";
import { CliHarness, prepareCli } from "../cli/harness.js";
import { ownVendorWire } from "../cli/provider-api.js";
import { proxyVariable } from "../cli/proxy-variable.js";
import { REWRITTEN_MARKER, rewrittenFilesSync } from "../rewritten-files.js";
import { answerRequest } from "./approvals.js";
import { boundConfig } from "./bound.js";
import { codexConfigToml, keyEnvironment } from "./config-toml.js";
import type { InitializeParams } from "./generated/InitializeParams.js";
import type { TurnInterruptParams } from "./generated/v2/TurnInterruptParams.js";
import type { TurnStartParams } from "./generated/v2/TurnStartParams.js";
import type { TurnSteerParams } from "./generated/v2/TurnSteerParams.js";
import { CodexNotificationMapper, type CodexSignal } from "./parser.js";
import { dropMovedDatabases } from "./relocate.js";
import { RpcConnection } from "./rpc.js";
import { type CodexState, missingThreadHistory, openThread } from "./threads.js";

export const STATE_FILE = "codex.json";
/** CODEX_HOME, relative to the native dir. */
export const CODEX_HOME = "codex";

interface Connection {
  child: CliProcess;
  rpc: RpcConnection;
  threadId: string;
}

export class CodexHarness extends CliHarness<Connection> {
  /** Codex's id for the running turn, once known. */
  private codexTurn: string | undefined;

  static async open(opening: CliOpening): Promise<CodexHarness> {
    const { options } = opening;
    ownVendorWire(opening.family, options.provider, { speaks: ["responses"], openai: "responses" });
    // What config.toml cannot hold is refused now, before a prompt starts Codex.
    codexConfigToml(options.config, options.provider);
    const ctx = prepareCli(opening, STATE_FILE);
    // Codex opens its state DB in CODEX_HOME: it must be the user's Codex runs as (a dev container's remoteUser).
    makeAgentDirSync(options.dir, CODEX_HOME, options.container?.user);
    const harness = new CodexHarness(ctx);
    // Seen with 0.171.0: for its default model at a custom endpoint, Codex sent requests without any tools.
    if (options.provider.base_url && !options.config.model)
      harness.warn(`no model set for the endpoint ${options.provider.base_url}; set one (--model)`);
    return harness;
  }

  override async steer(text: string, turn: string): Promise<void> {
    this.requireTurn(turn);
    const connection = this.connection;
    if (!connection || !this.codexTurn) return this.queue(text, turn);
    const params: TurnSteerParams = {
      threadId: connection.threadId,
      input: textInput(text),
      expectedTurnId: this.codexTurn,
    };
    try {
      await connection.rpc.request("turn/steer", params, this.ctx.timeouts.startMs);
    } catch (err) {
      // The CLI's turn ended between the steer and now: run it as the next turn instead, or refuse it when that
      // was the Brain turn's end too (queued, it would go out inside the session's next turn).
      this.requireTurn(turn);
      this.warn(
        `the steer could not reach the running turn (${(err as Error).message}); queued as a follow-up`,
      );
      this.queue(text, turn);
    }
  }

  protected override beforeSend(): void {
    this.codexTurn = undefined;
  }

  protected async send(connection: Connection, text: string): Promise<void> {
    const running = this.turn.current;
    const params: TurnStartParams = {
      threadId: connection.threadId,
      input: textInput(text),
    };
    const result = await connection.rpc.request("turn/start", params);
    const id = result?.turn?.id;
    if (typeof id === "string" && this.turn.current === running && !this.codexTurn) this.onCodexTurn(id);
  }

  /** Answered once codex has aborted the turn: a tool result after that is not sent on to the model. */
  protected async abort(connection: Connection | undefined): Promise<void> {
    if (!connection || !this.codexTurn) return;
    const params: TurnInterruptParams = { threadId: connection.threadId, turnId: this.codexTurn };
    await connection.rpc
      .request("turn/interrupt", params, this.ctx.timeouts.interruptGraceMs)
      .catch(() => {});
  }

  protected nativeFiles(): Promise<NativeFile[]> {
    // A rollout relocated here no longer starts as earlier checkpoints hold it.
    const rewritten = rewrittenFilesSync(this.options.dir, REWRITTEN_MARKER);
    return listNativeFiles(this.options.dir, `${CODEX_HOME}/sessions`, {
      include: (path) => /\/rollout-[^/]+\.jsonl$/.test(path),
      appendOnly: (path) => !rewritten.has(path),
    });
  }

  protected async connect(): Promise<Connection> {
    const home = join(this.options.dir, CODEX_HOME);
    const provider = await this.provider("responses", this.options.provider.base_url);
    const env = this.environment({
      CODEX_HOME: home,
      ...keyEnvironment(provider),
      ...proxyVariable(provider),
    });
    const { model } = this.options.config;
    const bound = this.ctx.bound
      ? await boundConfig(await this.toolEndpoint(), this.programRun(env), model)
      : undefined;
    // Bound, it names the endpoint's secret: readable by this user only.
    writeAgentFileSync(
      this.options.dir,
      join(CODEX_HOME, "config.toml"),
      codexConfigToml(this.options.config, provider, bound),
      0o600,
      this.options.container?.user,
    );
    // Before Codex opens them: databases copied from another home would send its turns to the rollout there.
    const dropped = dropMovedDatabases(home, (await this.readState<CodexState>())?.place?.home);
    if (dropped.length > 0)
      this.warn(`moved here from another home: removed ${dropped.join(", ")}, which named it`);
    const mapper = new CodexNotificationMapper();
    let rpc!: RpcConnection;
    const args = ["app-server", ...(this.ctx.session.args ?? [])];
    const child = this.spawn(
      args,
      env,
      (line) => rpc.handle(line),
      (err) => rpc.failAll(err),
    );
    rpc = new RpcConnection(this.label, (line) => child.write(line), {
      onNotification: (method, params) => {
        for (const signal of mapper.handle(method, params)) this.onSignal(signal);
      },
      onRequest: (id, method, params) =>
        void answerRequest(rpc, id, method, params, {
          permit: (use) => this.permit(use),
          ask: (question) => this.ask(question),
        }),
    });
    const { startMs } = this.ctx.timeouts;
    try {
      const init: InitializeParams = {
        clientInfo: { name: "brain", title: "Brain", version: "0.1.0" },
        capabilities: null,
      };
      await rpc.request("initialize", init, startMs);
      rpc.notify("initialized");
      const threadId = await this.openThread(rpc);
      mapper.threadId = threadId;
      return { child, rpc, threadId };
    } catch (err) {
      child.kill("SIGKILL");
      const failure =
        err instanceof HarnessError
          ? err
          : new HarnessError("brain_error", withTail((err as Error).message, child));
      // Given up on now: its exit, seen later, is not the failure of a prompt that has started another by then.
      this.lost(child, failure);
      throw failure;
    }
  }

  protected override isEndpointTool(name: string): boolean {
    return isMcpEndpointTool(name);
  }

  /** The thread's rollout (the only file `thread/resume` rebuilds its history from). */
  async verify(expected: ExpectedHistory): Promise<string | undefined> {
    const state = await this.readState<CodexState>();
    return missingThreadHistory(this.options.dir, `${CODEX_HOME}/sessions`, state, STATE_FILE, expected);
  }

  /** Resumes the thread this native dir holds, with the current cwd; starts one when there is none yet. */
  private async openThread(rpc: RpcConnection): Promise<string> {
    const state = await openThread({
      rpc,
      state: await this.readState<CodexState>(),
      place: { cwd: this.ctx.cwd, home: join(this.options.dir, CODEX_HOME) },
      systemPrompt: this.options.config.system_prompt,
      startMs: this.ctx.timeouts.startMs,
      label: this.label,
      warn: (message) => this.warn(message),
    });
    await this.writeState(state);
    return state.thread_id;
  }

  private onCodexTurn(id: string): void {
    this.codexTurn = id;
    // An interrupt that came before Codex named its turn is sent now.
    if (this.turn.current?.interrupted) this.abort(this.connection);
  }

  private onSignal(signal: CodexSignal): void {
    if (signal.kind === "warning") return this.warn(signal.message);
    if (!this.turn.current) return;
    switch (signal.kind) {
      case "event":
        return this.emitEvent(signal.event);
      case "turn-started":
        if (!this.codexTurn) this.onCodexTurn(signal.turnId);
        return;
      case "end":
        if (this.codexTurn && signal.turnId && signal.turnId !== this.codexTurn) return;
        return this.endTurn(signal.end);
    }
  }
}

function textInput(text: string): TurnStartParams["input"] {
  return [{ type: "text", text, text_elements: [] }];
}
