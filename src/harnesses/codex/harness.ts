// One Codex session: `codex app-server` (JSON-RPC on stdio), started at the first prompt (opening is passive) and
// again whenever it has gone away, then `thread/start`, or `thread/resume` with the current cwd for a thread
// this native dir already holds (also after a restore into another directory). Prompts are `turn/start`,
// steering is `turn/steer`, interrupts are `turn/interrupt`; approvals and questions go through Brain.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  type Harness,
  HarnessError,
  type HarnessOptions,
  type PromptOutcome,
  type TurnContext,
} from "../../core/harness.js";
import { preview } from "../../protocol/frames.js";
import type { NativeFile } from "../../protocol/runner.js";
import { CliProcess } from "../cli/child.js";
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
import { approvalFor, questionsFor } from "./approvals.js";
import { codexConfigToml, keyEnvironment } from "./config-toml.js";
import { CodexNotificationMapper, type CodexSignal } from "./parser.js";
import type { InitializeParams } from "./protocol/InitializeParams.js";
import type { ThreadResumeParams } from "./protocol/v2/ThreadResumeParams.js";
import type { ThreadStartParams } from "./protocol/v2/ThreadStartParams.js";
import type { TurnInterruptParams } from "./protocol/v2/TurnInterruptParams.js";
import type { TurnStartParams } from "./protocol/v2/TurnStartParams.js";
import type { TurnSteerParams } from "./protocol/v2/TurnSteerParams.js";
import { RpcConnection, RpcError } from "./rpc.js";

const LABEL = "codex";
export const STATE_FILE = "codex.json";
/** CODEX_HOME, relative to the native dir. */
export const CODEX_HOME = "codex";

interface CodexState {
  thread_id: string;
}

export interface CodexTimeouts {
  /** initialize and thread/start|resume. */
  startMs: number;
  interruptGraceMs: number;
}

const OPENAI_APIS = new Set(["openai", "openai-responses", "responses"]);

/** Codex asks before anything it does not consider safe; Brain's policy then decides. */
const APPROVAL_POLICY = "untrusted" as const;
const SANDBOX = "workspace-write" as const;

interface Connection {
  child: CliProcess;
  rpc: RpcConnection;
  mapper: CodexNotificationMapper;
  threadId: string;
}

export class CodexHarness implements Harness {
  private connection: Connection | undefined;
  private starting: Promise<Connection> | undefined;
  private readonly turn = new TurnSlot();
  /** Codex's id for the running turn, once known. */
  private codexTurn: string | undefined;
  private queued: string[] = [];
  private interruptTimer: NodeJS.Timeout | undefined;
  private closed = false;

  private constructor(
    private readonly options: HarnessOptions,
    private readonly program: string,
    private readonly host: CliFactoryOptions,
    private readonly session: CliSessionOptions,
    private readonly cwd: string,
    private readonly timeouts: CodexTimeouts,
  ) {}

  static async open(
    options: HarnessOptions,
    program: string,
    host: CliFactoryOptions,
    timeouts: Partial<CodexTimeouts> = {},
  ): Promise<CodexHarness> {
    const api = options.provider.api;
    if (api !== undefined && !OPENAI_APIS.has(api)) {
      throw new HarnessError(
        "brain_error",
        `${LABEL}: Codex speaks only the OpenAI Responses API, but the provider's api is "${api}"; ` +
          'use "openai-responses" (or leave it out) with a Responses-compatible base_url',
      );
    }
    const session = sessionOptions(LABEL, options.config);
    const cwd = workingDir(LABEL, options.dir, session);
    mkdirSync(join(options.dir, CODEX_HOME), { recursive: true });
    if (options.provider.base_url && !options.config.model) {
      // Seen with 0.171.0: for its default model at a custom endpoint, Codex sent requests without any tools.
      options.emit({
        type: "harness.warning",
        data: {
          message: `${LABEL}: no model set for the endpoint ${options.provider.base_url}; set one (--model)`,
        },
      });
    }
    if (options.tools.length > 0) {
      const names = options.tools.map((t) => t.name).join(", ");
      options.emit({
        type: "harness.warning",
        data: {
          message: `${LABEL}: Codex runs its own tools; the session's bound tools (${names}) are not offered to it`,
        },
      });
    }
    return new CodexHarness(options, program, host, session, cwd, {
      startMs: timeouts.startMs ?? 60_000,
      interruptGraceMs: timeouts.interruptGraceMs ?? 10_000,
    });
  }

  async prompt(text: string, ctx: TurnContext): Promise<PromptOutcome> {
    const done = this.turn.begin(ctx);
    this.codexTurn = undefined;
    this.startTurn(text).catch((err: Error) => this.failTurn(err));
    return done;
  }

  async steer(text: string, turn: string): Promise<void> {
    const running = this.turn.current;
    const connection = this.connection;
    if (!running || running.id !== turn) return;
    if (!connection || !this.codexTurn) {
      this.queued.push(text);
      return;
    }
    const params: TurnSteerParams = {
      threadId: connection.threadId,
      input: [{ type: "text", text, text_elements: [] }],
      expectedTurnId: this.codexTurn,
    };
    try {
      await connection.rpc.request("turn/steer", params, this.timeouts.startMs);
    } catch (err) {
      // The CLI's turn ended between the steer and now: run it as the next turn instead.
      this.warn(
        `the steer could not reach the running turn (${(err as Error).message}); queued as a follow-up`,
      );
      this.queued.push(text);
    }
  }

  async interrupt(turn: string): Promise<void> {
    const running = this.turn.current;
    if (!running || running.id !== turn || running.interrupted) return;
    running.interrupted = true;
    this.queued = [];
    this.sendInterrupt();
    this.interruptTimer = setTimeout(() => {
      if (this.turn.current !== running) return;
      this.warn(
        `the CLI did not end the interrupted turn within ${this.timeouts.interruptGraceMs} ms; killed it`,
      );
      this.connection?.child.kill("SIGKILL");
    }, this.timeouts.interruptGraceMs);
  }

  async checkpoint(): Promise<NativeFile[]> {
    const rollouts = await listNativeFiles(this.options.dir, `${CODEX_HOME}/sessions`, {
      include: (path) => /\/rollout-[^/]+\.jsonl$/.test(path),
      appendOnly: () => true,
    });
    const state = await listNativeFiles(this.options.dir, ".", {
      include: (path) => path === STATE_FILE,
      appendOnly: () => false,
    });
    return [...state, ...rollouts];
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.interruptTimer);
    this.turn.fail(new HarnessError("brain_error", `${LABEL}: the session closed`));
    const connection = this.connection;
    this.connection = undefined;
    await connection?.child.stop();
  }

  private async startTurn(text: string): Promise<void> {
    const connection = await this.ensureConnection();
    const running = this.turn.current;
    if (!running) return;
    const params: TurnStartParams = {
      threadId: connection.threadId,
      input: [{ type: "text", text, text_elements: [] }],
    };
    const result = await connection.rpc.request("turn/start", params);
    const id = result?.turn?.id;
    if (typeof id === "string" && this.turn.current === running && !this.codexTurn) this.onCodexTurn(id);
  }

  private onCodexTurn(id: string): void {
    this.codexTurn = id;
    // An interrupt that came before Codex named its turn is sent now.
    if (this.turn.current?.interrupted) this.sendInterrupt();
  }

  private sendInterrupt(): void {
    const connection = this.connection;
    if (!connection || !this.codexTurn) return;
    const params: TurnInterruptParams = { threadId: connection.threadId, turnId: this.codexTurn };
    connection.rpc.request("turn/interrupt", params, this.timeouts.interruptGraceMs).catch(() => {});
  }

  private ensureConnection(): Promise<Connection> {
    if (this.closed)
      return Promise.reject(new HarnessError("brain_error", `${LABEL}: the harness is closed`));
    if (this.connection?.child.alive) return Promise.resolve(this.connection);
    this.starting ??= this.connect().finally(() => {
      this.starting = undefined;
    });
    return this.starting;
  }

  private async connect(): Promise<Connection> {
    const home = join(this.options.dir, CODEX_HOME);
    writeFileSync(join(home, "config.toml"), codexConfigToml(this.options.config, this.options.provider));
    const env = cliEnvironment(
      this.options.dir,
      { CODEX_HOME: home, ...keyEnvironment(this.options.provider) },
      this.host.env,
    );
    const mapper = new CodexNotificationMapper();
    let rpc!: RpcConnection;
    const child: CliProcess = new CliProcess({
      label: LABEL,
      command: this.program,
      args: ["app-server", ...(this.session.args ?? [])],
      env,
      cwd: this.cwd,
      ...(this.host.launcher ? { launcher: this.host.launcher } : {}),
      onLine: (line) => this.onLine(child, rpc, line),
      onExit: (reason) => this.onExit(child, rpc, reason),
    });
    rpc = new RpcConnection(LABEL, (line) => child.write(line), {
      onNotification: (method, params) => {
        for (const signal of mapper.handle(method, params)) this.onSignal(signal);
      },
      onRequest: (id, method, params) => void this.onServerRequest(rpc, id, method, params),
    });
    try {
      const init: InitializeParams = {
        clientInfo: { name: "brain", title: "Brain", version: "0.1.0" },
        capabilities: null,
      };
      await rpc.request("initialize", init, this.timeouts.startMs);
      rpc.notify("initialized");
      const threadId = await this.openThread(rpc);
      mapper.threadId = threadId;
      const connection = { child, rpc, mapper, threadId };
      this.connection = connection;
      return connection;
    } catch (err) {
      child.kill("SIGKILL");
      if (err instanceof HarnessError) throw err;
      throw new HarnessError("brain_error", withTail((err as Error).message, child));
    }
  }

  /** Resumes the thread this native dir holds, with the current cwd; starts one when there is none yet. */
  private async openThread(rpc: RpcConnection): Promise<string> {
    const stateFile = join(this.options.dir, STATE_FILE);
    const state = await readJsonFile<CodexState>(stateFile);
    const common = { cwd: this.cwd, approvalPolicy: APPROVAL_POLICY, sandbox: SANDBOX };
    const instructions = this.options.config.system_prompt
      ? { developerInstructions: this.options.config.system_prompt }
      : {};
    if (state?.thread_id) {
      const params: ThreadResumeParams = {
        threadId: state.thread_id,
        excludeTurns: true,
        ...common,
        ...instructions,
      };
      try {
        await rpc.request("thread/resume", params, this.timeouts.startMs);
        return state.thread_id;
      } catch (err) {
        // A thread checkpointed before its first turn has no rollout yet: there is nothing to resume.
        if (!(err instanceof RpcError) || !/no rollout found/i.test(err.message)) throw err;
        this.warn(`thread ${state.thread_id} had no saved history; started a new thread`);
      }
    }
    const params: ThreadStartParams = { ...common, ...instructions };
    const result = await rpc.request("thread/start", params, this.timeouts.startMs);
    const threadId = result?.thread?.id;
    if (typeof threadId !== "string")
      throw new HarnessError("brain_error", `${LABEL}: thread/start returned no thread id`);
    await writeJsonFile(stateFile, { thread_id: threadId } satisfies CodexState);
    return threadId;
  }

  private onLine(child: CliProcess, rpc: RpcConnection, line: string): void {
    if (line.trim() === "") return;
    let decoded: unknown;
    try {
      decoded = JSON.parse(line);
    } catch {
      child.kill("SIGKILL");
      const err = new HarnessError(
        "brain_error",
        withTail(`${LABEL}: codex wrote a line that is not JSON on stdout: ${preview(line)}`, child),
      );
      rpc.failAll(err);
      return this.failTurn(err);
    }
    rpc.handle(decoded);
  }

  private onExit(child: CliProcess, rpc: RpcConnection, reason: string): void {
    if (this.connection?.child === child) this.connection = undefined;
    const err = new HarnessError("brain_error", reason);
    rpc.failAll(err);
    this.failTurn(err);
  }

  private onSignal(signal: CodexSignal): void {
    const turn = this.turn.current;
    if (!turn) return;
    switch (signal.kind) {
      case "event":
        this.options.emit({ ...signal.event, turn: turn.id });
        return;
      case "turn-started":
        if (!this.codexTurn) this.onCodexTurn(signal.turnId);
        return;
      case "end":
        if (this.codexTurn && signal.turnId && signal.turnId !== this.codexTurn) return;
        this.onTurnEnd(signal.end);
        return;
    }
  }

  private onTurnEnd(end: CliTurnEnd): void {
    const turn = this.turn.current;
    if (!turn) return;
    if (end.outcome === "completed" && !turn.interrupted && this.queued.length > 0) {
      this.codexTurn = undefined;
      this.startTurn(this.queued.shift()!).catch((err: Error) => this.failTurn(err));
      return;
    }
    clearTimeout(this.interruptTimer);
    this.queued = [];
    if (end.outcome === "failed") return this.turn.fail(new HarnessError(end.code, end.message));
    this.turn.settle(end.outcome === "aborted");
  }

  private async onServerRequest(rpc: RpcConnection, id: string | number, method: string, params: unknown) {
    const turn = this.turn.current;
    const approval = approvalFor(method, params);
    if (approval) {
      const verdict = turn
        ? await this.options.permit(turn.id, approval.use, turn.signal)
        : { decision: "deny" as const, reason: "no turn is running" };
      return rpc.respond(id, approval.answer(verdict));
    }
    const questions = questionsFor(method, params);
    if (questions) {
      const answers = new Map<string, string>();
      for (const q of questions.questions) {
        const options = q.options ? { options: q.options } : {};
        answers.set(
          q.id,
          turn ? await this.options.ask(turn.id, { question: q.question, ...options }, turn.signal) : "",
        );
      }
      return rpc.respond(id, questions.answer(answers));
    }
    rpc.respondError(id, -32601, `Brain does not handle "${method}"`);
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

function withTail(message: string, child: CliProcess): string {
  const tail = child.stderrTail();
  return tail ? `${message}; its stderr ended with: ${tail}` : message;
}
