// One opencode session: `opencode serve` on a free loopback port with a password, started at the first prompt
// (opening is passive) and again whenever it has gone away; its `/event` stream, `prompt_async`, `abort`, and
// permission and question replies. opencode cannot take input mid-turn, so a steer is queued (by CliHarness) and sent as the
// next prompt when the session goes idle, inside the same Brain turn.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { type ExpectedHistory, HarnessError } from "../../core/harness.js";
import type { NativeFile } from "../../protocol/runner.js";
import { ENDPOINT_SERVER_NAME } from "../../tools/endpoint/index.js";
import { makeAgentDirSync, replaceAgentFile, writeAgentFileSync } from "../agent-files.js";
import type { CliOpening } from "../cli/family.js";
import { listNativeFiles } from "../cli/files.js";
import { type CliContext, CliHarness, prepareCli } from "../cli/harness.js";
import { endpointWire, keyWire, type WireApi } from "../cli/provider-api.js";
import { proxyVariable } from "../cli/proxy-variable.js";
import type { CliProvider } from "../cli/services.js";
import { unknownTypeWarning } from "../cli/unknown-types.js";
import { boundEnvironment, endpointWarning, isEndpointTool } from "./bound.js";
import { keyEnvironment, modelRef, OPENCODE_WIRES, opencodeConfig } from "./config-json.js";
import { OpencodeEventMapper, type OpencodeQuestion, type OpencodeSignal } from "./parser.js";
import { OpencodeServer } from "./server.js";
import { missingSessionHistory, type OpencodeState, openSession } from "./session.js";
import { exportedJson, type OneShot, runOpencode } from "./transfer.js";

/** Brain's record of which opencode session this native dir holds. */
export const STATE_FILE = "opencode-state.json";
/** The session as `opencode export` wrote it at the last checkpoint. */
export const EXPORT_FILE = "opencode-session.json";
/** opencode's config, data, state and cache dirs, relative to the native dir. */
export const OPENCODE_DIR = "opencode";

export class OpencodeHarness extends CliHarness<OpencodeServer> {
  private readonly mapper = new OpencodeEventMapper();
  private sessionId: string | undefined;
  /** The provider as opencode reaches it (Brain's credential proxy, when there is one), from the first connect. */
  private given: CliProvider = {};

  private constructor(
    ctx: CliContext,
    /** The wire to the provider's endpoint; set when there is one. */
    private readonly wire: WireApi | undefined,
  ) {
    super(ctx);
  }

  static async open(opening: CliOpening): Promise<OpencodeHarness> {
    const { dir } = opening.options;
    const wire = endpointWire(opening.family, opening.options, OPENCODE_WIRES);
    const ctx = prepareCli(opening, STATE_FILE);
    // opencode writes into all four: they are the user's it runs as (a dev container's remoteUser).
    const owner = opening.options.container?.user;
    for (const sub of ["config", "data", "state", "cache"])
      makeAgentDirSync(dir, join(OPENCODE_DIR, sub), owner);
    return new OpencodeHarness(ctx, wire);
  }

  protected async connect(): Promise<OpencodeServer> {
    const root = join(this.options.dir, OPENCODE_DIR);
    const { config, provider } = this.options;
    const bound = this.ctx.bound ? ENDPOINT_SERVER_NAME : undefined;
    // The key's wire: opencode then reaches its provider through Brain's credential proxy (../cli/services.ts).
    const wire = keyWire(this.ctx.family, provider, OPENCODE_WIRES, this.wire);
    if (wire) this.given = await this.provider(wire, provider.base_url);
    writeAgentFileSync(
      this.options.dir,
      join(root, "opencode.json"),
      opencodeConfig(config, provider, this.wire, { ...this.given, keyWire: wire }, bound),
      undefined,
      this.options.container?.user,
    );
    const endpoint = this.ctx.bound ? await this.toolEndpoint() : undefined;
    const state = await this.readState<OpencodeState>();
    const exported = join(this.options.dir, EXPORT_FILE);
    // A restored native dir has the export but no database yet: import it here, in this session's cwd.
    if (state?.session_id && !existsSync(this.databasePath()) && existsSync(exported)) {
      await runOpencode(this.oneShot(), ["import", exported]);
    }
    let server: OpencodeServer | undefined;
    server = await OpencodeServer.start({
      ...this.oneShot(endpoint ? boundEnvironment(endpoint) : {}),
      extraArgs: this.ctx.session.args ?? [],
      startTimeoutMs: this.ctx.timeouts.startMs,
      ...(this.ctx.spawner ? { spawner: this.ctx.spawner } : {}),
      ...(this.options.container ? { publish: this.options.container.publish } : {}),
      backlog: this.options.backlog,
      onEvent: (event) => {
        for (const signal of this.mapper.handle(event)) this.onSignal(server!, signal);
      },
      onWarn: (message) => this.warn(message),
      // `server` is unset while it starts: a program that exits then fails the turn all the same.
      onGone: (reason) => this.lost(server?.child, new HarnessError("brain_error", reason)),
    });
    try {
      const warning = endpoint ? await endpointWarning(server) : undefined;
      if (warning) this.warn(warning);
      const title = `brain ${this.options.sessionId}`;
      this.sessionId = await openSession(server, state, title, this.label, (message) => this.warn(message));
    } catch (err) {
      // First: the stop below ends the program, and its exit must not stand in for why the start failed.
      this.failTurn(err as Error);
      await server.stop();
      throw err;
    }
    this.mapper.sessionId = this.sessionId;
    if (state?.session_id !== this.sessionId) await this.writeState({ session_id: this.sessionId });
    return server;
  }

  protected async send(server: OpencodeServer, text: string): Promise<void> {
    // Interrupted while the server was starting: nothing was sent, so there is nothing to abort.
    if (this.turn.current?.interrupted) return this.turn.settle(true);
    const model = modelRef(this.options.config, this.options.provider);
    const { system_prompt } = this.options.config;
    await server.call("POST", `/session/${this.sessionId}/prompt_async`, {
      parts: [{ type: "text", text }],
      ...(model ? { model } : {}),
      ...(system_prompt ? { system: system_prompt } : {}),
    });
  }

  /** Answered once opencode has aborted its loop: a tool result after that is dropped, not sent to the model. */
  protected async abort(server: OpencodeServer | undefined): Promise<void> {
    if (server && this.sessionId)
      await server.call("POST", `/session/${this.sessionId}/abort`).catch(() => {});
  }

  /** Exports the session (the database itself is rewritten every turn and records absolute paths). */
  protected async nativeFiles(): Promise<NativeFile[]> {
    const state = await this.readState<OpencodeState>();
    if (state?.session_id && existsSync(this.databasePath())) {
      const stdout = await runOpencode(this.oneShot(), ["export", state.session_id]);
      // Not through a link: a sandboxed opencode can write the native dir.
      await replaceAgentFile(this.options.dir, EXPORT_FILE, exportedJson(stdout));
    }
    return listNativeFiles(this.options.dir, ".", {
      include: (path) => path === EXPORT_FILE,
      appendOnly: () => false,
    });
  }

  /** opencode's database, or the export a restore imports (session.ts says how it is read). */
  async verify(expected: ExpectedHistory): Promise<string | undefined> {
    const exported = join(this.options.dir, EXPORT_FILE);
    const files = { db: this.databasePath(), exported, stateFile: STATE_FILE };
    return missingSessionHistory(this.options.dir, files, await this.readState<OpencodeState>(), expected);
  }

  private databasePath(): string {
    return join(this.options.dir, OPENCODE_DIR, "data", "opencode", "opencode.db");
  }

  protected override isEndpointTool(name: string): boolean {
    return isEndpointTool(name);
  }

  private oneShot(extraEnv: Record<string, string> = {}): OneShot {
    const root = join(this.options.dir, OPENCODE_DIR);
    const env = this.environment({
      OPENCODE_CONFIG: join(root, "opencode.json"),
      XDG_CONFIG_HOME: join(root, "config"),
      XDG_DATA_HOME: join(root, "data"),
      XDG_STATE_HOME: join(root, "state"),
      XDG_CACHE_HOME: join(root, "cache"),
      OPENCODE_DISABLE_MODELS_FETCH: "1",
      OPENCODE_DISABLE_AUTOUPDATE: "1",
      OPENCODE_DISABLE_LSP_DOWNLOAD: "1",
      OPENCODE_DISABLE_SHARE: "1",
      // Before the first connect none: export and import call no model.
      ...keyEnvironment(this.ctx.family, { ...this.options.provider, api_key: this.given.api_key }),
      ...proxyVariable(this.given),
      ...extraEnv,
    });
    return this.programRun(env);
  }

  private onSignal(server: OpencodeServer, signal: OpencodeSignal): void {
    switch (signal.kind) {
      case "event":
        return this.emitEvent(signal.event);
      case "permission":
        void this.answerPermission(server, signal);
        return;
      case "question":
        void this.answerQuestion(server, signal);
        return;
      case "end":
        return this.endTurn(signal.end);
      case "unknown":
        return this.warn(
          unknownTypeWarning("opencode", signal.type, signal.part ? "a message part" : "an event"),
        );
    }
  }

  private async answerPermission(
    server: OpencodeServer,
    signal: Extract<OpencodeSignal, { kind: "permission" }>,
  ) {
    const verdict = await this.permit({
      tool: signal.tool,
      arguments: signal.arguments,
      ...(signal.subagent ? { reason: `a subagent asks (opencode session ${signal.subagent})` } : {}),
      ...(signal.callId ? { tool_call_id: signal.callId } : {}),
    });
    const reply = verdict.decision === "allow" ? "once" : "reject";
    await server
      .call("POST", `/permission/${signal.id}/reply`, { reply })
      .catch((err: Error) => this.warn(err.message));
  }

  /**
   * opencode's `question` tool: each of its questions goes to the session's clients in turn. No answer (none in
   * time, the turn interrupted) dismisses the request, which opencode gives the model as the user's refusal.
   */
  private async answerQuestion(
    server: OpencodeServer,
    signal: Extract<OpencodeSignal, { kind: "question" }>,
  ) {
    const answers: string[][] = [];
    for (const question of signal.questions) {
      const answer = await this.ask(brainQuestion(question));
      if (answer === "") {
        // Best effort: an aborted session has dropped its questions already.
        await server.call("POST", `/question/${signal.id}/reject`).catch(() => {});
        return;
      }
      answers.push(selected(question, answer));
    }
    await server
      .call("POST", `/question/${signal.id}/reply`, { answers })
      .catch((err: Error) => this.warn(err.message));
  }
}

function brainQuestion(question: OpencodeQuestion) {
  const descriptions = question.options.filter((o) => o.description !== undefined);
  return {
    question: question.question,
    ...(question.header ? { header: question.header } : {}),
    ...(question.options.length > 0 ? { options: question.options.map((o) => o.label) } : {}),
    ...(descriptions.length > 0
      ? { option_descriptions: Object.fromEntries(descriptions.map((o) => [o.label, o.description!])) }
      : {}),
  };
}

/**
 * opencode's answer is the labels picked: a question that allows several takes them comma-separated, when each
 * is one of its labels; anything else is one answer (opencode lets the user type their own).
 */
function selected(question: OpencodeQuestion, answer: string): string[] {
  if (!question.multiple) return [answer];
  const labels = new Set(question.options.map((o) => o.label));
  const picked = answer.split(",").map((a) => a.trim());
  return picked.every((a) => labels.has(a)) ? picked : [answer];
}
