// One opencode session: `opencode serve` on a free loopback port with a password, started at the first prompt
// (opening is passive) and again whenever it has gone away; its `/event` stream, `prompt_async`, `abort`, and
// permission replies. opencode cannot take input mid-turn, so a steer is queued and sent as the next prompt when
// the session goes idle, inside the same Brain turn.
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  type Harness,
  HarnessError,
  type HarnessOptions,
  type PromptOutcome,
  type TurnContext,
} from "../../core/harness.js";
import type { NativeFile } from "../../protocol/runner.js";
import { cliEnvironment } from "../cli/environment.js";
import type { CliTurnEnd } from "../cli/events.js";
import { listNativeFiles, readJsonFile, writeJsonFile } from "../cli/files.js";
import {
  type CliFactoryOptions,
  type CliSessionOptions,
  sessionOptions,
  workingDir,
} from "../cli/options.js";
import { TurnSlot } from "../cli/turn.js";
import { keyEnvironment, modelRef, opencodeConfig, providerPackage } from "./config-json.js";
import { OpencodeEventMapper, type OpencodeSignal } from "./parser.js";
import { OpencodeServer } from "./server.js";
import { exportedJson, type OneShot, runOpencode } from "./transfer.js";

const LABEL = "opencode";
/** Brain's record of which opencode session this native dir holds. */
export const STATE_FILE = "opencode-state.json";
/** The session as `opencode export` wrote it at the last checkpoint. */
export const EXPORT_FILE = "opencode-session.json";
/** opencode's config, data, state and cache dirs, relative to the native dir. */
export const OPENCODE_DIR = "opencode";

interface OpencodeState {
  session_id: string;
}

export interface OpencodeTimeouts {
  /** Until the server answers its health check. */
  startMs: number;
  interruptGraceMs: number;
}

export class OpencodeHarness implements Harness {
  private server: OpencodeServer | undefined;
  private starting: Promise<OpencodeServer> | undefined;
  private readonly mapper = new OpencodeEventMapper();
  private readonly turn = new TurnSlot();
  private queued: string[] = [];
  private interruptTimer: NodeJS.Timeout | undefined;
  private sessionId: string | undefined;
  private closed = false;

  private constructor(
    private readonly options: HarnessOptions,
    private readonly program: string,
    private readonly host: CliFactoryOptions,
    private readonly session: CliSessionOptions,
    private readonly cwd: string,
    private readonly timeouts: OpencodeTimeouts,
  ) {}

  static async open(
    options: HarnessOptions,
    program: string,
    host: CliFactoryOptions,
    timeouts: Partial<OpencodeTimeouts> = {},
  ): Promise<OpencodeHarness> {
    const { provider, config } = options;
    if (provider.base_url) {
      providerPackage(provider.api); // an api opencode cannot speak fails here
      if (!config.model) {
        throw new HarnessError(
          "brain_error",
          `${LABEL}: with a provider base_url, opencode needs the model's id at that endpoint: set the session's model (--model)`,
        );
      }
    }
    const session = sessionOptions(LABEL, config);
    const cwd = workingDir(LABEL, options.dir, session);
    for (const sub of ["config", "data", "state", "cache"])
      mkdirSync(join(options.dir, OPENCODE_DIR, sub), { recursive: true });
    if (options.tools.length > 0) {
      const names = options.tools.map((t) => t.name).join(", ");
      options.emit({
        type: "harness.warning",
        data: {
          message: `${LABEL}: opencode runs its own tools; the session's bound tools (${names}) are not offered to it`,
        },
      });
    }
    return new OpencodeHarness(options, program, host, session, cwd, {
      startMs: timeouts.startMs ?? 120_000,
      interruptGraceMs: timeouts.interruptGraceMs ?? 10_000,
    });
  }

  async prompt(text: string, ctx: TurnContext): Promise<PromptOutcome> {
    const done = this.turn.begin(ctx);
    this.send(text).catch((err: Error) => this.failTurn(err));
    return done;
  }

  async steer(text: string, turn: string): Promise<void> {
    if (this.turn.current?.id === turn) this.queued.push(text);
  }

  async interrupt(turn: string): Promise<void> {
    const running = this.turn.current;
    if (!running || running.id !== turn || running.interrupted) return;
    running.interrupted = true;
    this.queued = [];
    const server = this.server;
    if (server && this.sessionId) server.call("POST", `/session/${this.sessionId}/abort`).catch(() => {});
    this.interruptTimer = setTimeout(() => {
      if (this.turn.current !== running) return;
      this.warn(
        `the CLI did not end the interrupted turn within ${this.timeouts.interruptGraceMs} ms; killed it`,
      );
      this.server?.child.kill("SIGKILL");
    }, this.timeouts.interruptGraceMs);
  }

  /** Exports the session (the database itself is rewritten every turn and records absolute paths). */
  async checkpoint(): Promise<NativeFile[]> {
    const state = await readJsonFile<OpencodeState>(join(this.options.dir, STATE_FILE));
    if (state?.session_id && existsSync(this.databasePath())) {
      const stdout = await runOpencode(this.oneShot(), ["export", state.session_id]);
      writeFileSync(join(this.options.dir, EXPORT_FILE), exportedJson(stdout));
    }
    return listNativeFiles(this.options.dir, ".", {
      include: (path) => path === STATE_FILE || path === EXPORT_FILE,
      appendOnly: () => false,
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.interruptTimer);
    this.turn.fail(new HarnessError("brain_error", `${LABEL}: the session closed`));
    const server = this.server;
    this.server = undefined;
    await server?.stop();
  }

  private async send(text: string): Promise<void> {
    const server = await this.ensureServer();
    const running = this.turn.current;
    if (!running) return;
    // Interrupted while the server was starting: nothing was sent, so there is nothing to abort.
    if (running.interrupted) return this.turn.settle(true);
    const model = modelRef(this.options.config, this.options.provider);
    const { system_prompt } = this.options.config;
    await server.call("POST", `/session/${this.sessionId}/prompt_async`, {
      parts: [{ type: "text", text }],
      ...(model ? { model } : {}),
      ...(system_prompt ? { system: system_prompt } : {}),
    });
  }

  private databasePath(): string {
    return join(this.options.dir, OPENCODE_DIR, "data", "opencode", "opencode.db");
  }

  private environment(): Record<string, string> {
    const root = join(this.options.dir, OPENCODE_DIR);
    return cliEnvironment(
      this.options.dir,
      {
        OPENCODE_CONFIG: join(root, "opencode.json"),
        XDG_CONFIG_HOME: join(root, "config"),
        XDG_DATA_HOME: join(root, "data"),
        XDG_STATE_HOME: join(root, "state"),
        XDG_CACHE_HOME: join(root, "cache"),
        OPENCODE_DISABLE_MODELS_FETCH: "1",
        OPENCODE_DISABLE_AUTOUPDATE: "1",
        OPENCODE_DISABLE_LSP_DOWNLOAD: "1",
        OPENCODE_DISABLE_SHARE: "1",
        ...keyEnvironment(this.options.provider),
      },
      this.host.env,
    );
  }

  private oneShot(): OneShot {
    return {
      command: this.program,
      env: this.environment(),
      cwd: this.cwd,
      ...(this.host.launcher ? { launcher: this.host.launcher } : {}),
    };
  }

  private ensureServer(): Promise<OpencodeServer> {
    if (this.closed)
      return Promise.reject(new HarnessError("brain_error", `${LABEL}: the harness is closed`));
    if (this.server?.child.alive) return Promise.resolve(this.server);
    this.starting ??= this.startServer().finally(() => {
      this.starting = undefined;
    });
    return this.starting;
  }

  private async startServer(): Promise<OpencodeServer> {
    const root = join(this.options.dir, OPENCODE_DIR);
    writeFileSync(join(root, "opencode.json"), opencodeConfig(this.options.config, this.options.provider));
    const stateFile = join(this.options.dir, STATE_FILE);
    const state = await readJsonFile<OpencodeState>(stateFile);
    const exported = join(this.options.dir, EXPORT_FILE);
    // A restored native dir has the export but no database yet: import it here, in this session's cwd.
    if (state?.session_id && !existsSync(this.databasePath()) && existsSync(exported)) {
      await runOpencode(this.oneShot(), ["import", exported]);
    }
    let server!: OpencodeServer;
    server = await OpencodeServer.start({
      command: this.program,
      extraArgs: this.session.args ?? [],
      env: this.environment(),
      cwd: this.cwd,
      ...(this.host.launcher ? { launcher: this.host.launcher } : {}),
      startTimeoutMs: this.timeouts.startMs,
      onEvent: (event) => {
        for (const signal of this.mapper.handle(event)) this.onSignal(server, signal);
      },
      onGone: (reason) => {
        if (this.server === server) this.server = undefined;
        this.failTurn(new HarnessError("brain_error", reason));
      },
    });
    try {
      this.sessionId = await this.openSession(server, state);
    } catch (err) {
      await server.stop();
      throw err;
    }
    this.mapper.sessionId = this.sessionId;
    if (state?.session_id !== this.sessionId) await writeJsonFile(stateFile, { session_id: this.sessionId });
    this.server = server;
    return server;
  }

  private async openSession(server: OpencodeServer, state: OpencodeState | undefined): Promise<string> {
    if (state?.session_id) {
      try {
        await server.call("GET", `/session/${state.session_id}`);
        return state.session_id;
      } catch {
        this.warn(`session ${state.session_id} is not in opencode's database; started a new one`);
      }
    }
    const created = (await server.call("POST", "/session", { title: `brain ${this.options.sessionId}` })) as {
      id?: string;
    };
    if (typeof created?.id !== "string")
      throw new HarnessError("brain_error", `${LABEL}: POST /session returned no id`);
    return created.id;
  }

  private onSignal(server: OpencodeServer, signal: OpencodeSignal): void {
    const turn = this.turn.current;
    switch (signal.kind) {
      case "event":
        if (turn) this.options.emit({ ...signal.event, turn: turn.id });
        return;
      case "permission":
        void this.answerPermission(server, signal);
        return;
      case "end":
        this.onTurnEnd(signal.end);
        return;
    }
  }

  private onTurnEnd(end: CliTurnEnd): void {
    const turn = this.turn.current;
    if (!turn) return;
    if (end.outcome === "completed" && !turn.interrupted && this.queued.length > 0) {
      this.send(this.queued.shift()!).catch((err: Error) => this.failTurn(err));
      return;
    }
    clearTimeout(this.interruptTimer);
    this.queued = [];
    if (end.outcome === "failed") return this.turn.fail(new HarnessError(end.code, end.message));
    this.turn.settle(end.outcome === "aborted");
  }

  private async answerPermission(
    server: OpencodeServer,
    signal: Extract<OpencodeSignal, { kind: "permission" }>,
  ) {
    const turn = this.turn.current;
    const verdict = turn
      ? await this.options.permit(turn.id, { tool: signal.tool, arguments: signal.arguments }, turn.signal)
      : { decision: "deny" as const };
    const reply = verdict.decision === "allow" ? "once" : "reject";
    await server
      .call("POST", `/permission/${signal.id}/reply`, { reply })
      .catch((err: Error) => this.warn(err.message));
  }

  private failTurn(err: Error): void {
    clearTimeout(this.interruptTimer);
    this.queued = [];
    this.turn.fail(err instanceof HarnessError ? err : new HarnessError("brain_error", err.message));
  }

  private warn(message: string): void {
    const turn = this.turn.current;
    this.options.emit({
      type: "harness.warning",
      ...(turn ? { turn: turn.id } : {}),
      data: { message: `${LABEL}: ${message}` },
    });
  }
}
