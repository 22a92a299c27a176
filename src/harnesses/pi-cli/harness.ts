// One pi session: `pi --mode rpc`, started at the first prompt (opening is passive) and again, on the session's
// file, whenever it has gone away. Prompts are `prompt` commands, steering is `steer`, interrupts are `abort`.
// pi never asks before running a tool, so Brain's policy gates its tools up front with `--tools`: a tool the
// policy allows is enabled, one it denies or would ask about is not (pi has no way to ask).
import { mkdirSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
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
import { listNativeFiles } from "../cli/files.js";
import {
  type CliFactoryOptions,
  type CliSessionOptions,
  sessionOptions,
  workingDir,
} from "../cli/options.js";
import { TurnSlot } from "../cli/turn.js";
import { KEY_VARIABLE, modelsJson, PROVIDER, piApi } from "./models-json.js";
import { PiEventParser, type PiSignal } from "./parser.js";
import { latestSessionFile, rebaseSession } from "./sessions.js";

const LABEL = "pi-cli";
/** PI_CODING_AGENT_DIR, relative to the native dir. */
export const AGENT_DIR = "pi";
export const SESSIONS_DIR = "pi/sessions";
/** pi's tools enabled by default; `--tools` narrows them to the ones the policy allows. */
export const PI_TOOLS = ["read", "bash", "edit", "write"] as const;

export interface PiTimeouts {
  interruptGraceMs: number;
}

export class PiHarness implements Harness {
  private child: CliProcess | undefined;
  private parser = new PiEventParser();
  private readonly turn = new TurnSlot();
  private nextId = 1;
  private interruptTimer: NodeJS.Timeout | undefined;
  private closed = false;

  private constructor(
    private readonly options: HarnessOptions,
    private readonly program: string,
    private readonly host: CliFactoryOptions,
    private readonly session: CliSessionOptions,
    private readonly cwd: string,
    private readonly timeouts: PiTimeouts,
  ) {}

  static async open(
    options: HarnessOptions,
    program: string,
    host: CliFactoryOptions,
    timeouts: Partial<PiTimeouts> = {},
  ): Promise<PiHarness> {
    const { provider, config } = options;
    if (provider.base_url) {
      piApi(provider.api); // an api pi cannot speak fails here, before anything starts
      if (!config.model) {
        throw new HarnessError(
          "brain_error",
          `${LABEL}: with a provider base_url, pi needs the model's id at that endpoint: set the session's model (--model)`,
        );
      }
    }
    const session = sessionOptions(LABEL, config);
    const cwd = workingDir(LABEL, options.dir, session);
    mkdirSync(join(options.dir, SESSIONS_DIR), { recursive: true });
    if (options.tools.length > 0) {
      const names = options.tools.map((t) => t.name).join(", ");
      options.emit({
        type: "harness.warning",
        data: {
          message: `${LABEL}: pi runs its own tools; the session's bound tools (${names}) are not offered to it`,
        },
      });
    }
    return new PiHarness(options, program, host, session, cwd, {
      interruptGraceMs: timeouts.interruptGraceMs ?? 10_000,
    });
  }

  async prompt(text: string, ctx: TurnContext): Promise<PromptOutcome> {
    const done = this.turn.begin(ctx);
    try {
      this.ensureProcess();
      this.send({ id: `prompt-${this.nextId++}`, type: "prompt", message: text });
    } catch (err) {
      this.turn.fail(err instanceof HarnessError ? err : new HarnessError("brain_error", String(err)));
    }
    return done;
  }

  async steer(text: string, turn: string): Promise<void> {
    if (this.turn.current?.id !== turn) return;
    this.send({ id: `steer-${this.nextId++}`, type: "steer", message: text });
  }

  async interrupt(turn: string): Promise<void> {
    const running = this.turn.current;
    if (!running || running.id !== turn || running.interrupted) return;
    running.interrupted = true;
    this.send({ id: `abort-${this.nextId++}`, type: "abort" });
    this.interruptTimer = setTimeout(() => {
      if (this.turn.current !== running) return;
      this.warn(
        `the CLI did not end the interrupted turn within ${this.timeouts.interruptGraceMs} ms; killed it`,
      );
      this.child?.kill("SIGKILL");
    }, this.timeouts.interruptGraceMs);
  }

  async checkpoint(): Promise<NativeFile[]> {
    return listNativeFiles(this.options.dir, SESSIONS_DIR, {
      include: (path) => path.endsWith(".jsonl"),
      appendOnly: () => true,
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.interruptTimer);
    this.turn.fail(new HarnessError("brain_error", `${LABEL}: the session closed`));
    const child = this.child;
    this.child = undefined;
    await child?.stop();
  }

  /** The tools Brain's policy lets pi enable, or undefined to leave pi's defaults (no policy to ask). */
  private allowedTools(): string[] | undefined {
    const policy = this.options.policy;
    if (!policy) return undefined;
    const decisions = PI_TOOLS.map((tool) => [tool, policy(tool)] as const);
    const asking = decisions.filter(([, d]) => d === "ask").map(([tool]) => tool);
    if (asking.length > 0) {
      this.warn(
        `pi cannot ask before a tool call, so the tools the policy would ask about are disabled: ${asking.join(", ")}`,
      );
    }
    return decisions.filter(([, d]) => d === "allow").map(([tool]) => tool);
  }

  private ensureProcess(): void {
    if (this.closed) throw new HarnessError("brain_error", `${LABEL}: the harness is closed`);
    if (this.child?.alive) return;
    const { provider, config } = this.options;
    const agentDir = join(this.options.dir, AGENT_DIR);
    const sessionsDir = join(this.options.dir, SESSIONS_DIR);
    const args = ["--mode", "rpc", "--offline", "--session-dir", sessionsDir];
    const existing = latestSessionFile(sessionsDir);
    if (existing) {
      if (rebaseSession(existing, this.cwd)) {
        this.warn(
          `session ${relative(this.options.dir, existing)} moved here; its working directory is now ${this.cwd}`,
        );
      }
      args.push("--session", existing);
    }
    if (provider.base_url) {
      writeFileSync(join(agentDir, "models.json"), modelsJson(provider, config.model!));
      args.push("--provider", PROVIDER, "--model", config.model!);
    } else if (config.model) {
      args.push("--model", config.model);
    }
    if (config.system_prompt) args.push("--append-system-prompt", config.system_prompt);
    const tools = this.allowedTools();
    if (tools) args.push(...(tools.length > 0 ? ["--tools", tools.join(",")] : ["--no-tools"]));
    args.push(...(this.session.args ?? []));
    const key: Record<string, string> = provider.api_key
      ? provider.base_url
        ? { [KEY_VARIABLE]: provider.api_key }
        : {
            ANTHROPIC_API_KEY: provider.api_key,
            OPENAI_API_KEY: provider.api_key,
            GEMINI_API_KEY: provider.api_key,
          }
      : {};
    const env = cliEnvironment(
      this.options.dir,
      { PI_CODING_AGENT_DIR: agentDir, PI_OFFLINE: "1", ...key },
      this.host.env,
    );
    this.parser = new PiEventParser();
    const child: CliProcess = new CliProcess({
      label: LABEL,
      command: this.program,
      args,
      env,
      cwd: this.cwd,
      ...(this.host.launcher ? { launcher: this.host.launcher } : {}),
      onLine: (line) => this.onLine(child, line),
      onExit: (reason) => this.onExit(child, reason),
    });
    this.child = child;
  }

  private onLine(child: CliProcess, line: string): void {
    const trimmed = line.endsWith("\r") ? line.slice(0, -1) : line;
    if (trimmed.trim() === "") return;
    let decoded: unknown;
    try {
      decoded = JSON.parse(trimmed);
    } catch {
      child.kill("SIGKILL");
      const tail = child.stderrTail();
      const message = `${LABEL}: pi wrote a line that is not JSON on stdout: ${preview(trimmed)}`;
      return this.failTurn(
        new HarnessError("brain_error", tail ? `${message}; its stderr ended with: ${tail}` : message),
      );
    }
    for (const signal of this.parser.handle(decoded)) this.onSignal(signal);
  }

  private onSignal(signal: PiSignal): void {
    const turn = this.turn.current;
    switch (signal.kind) {
      case "event":
        if (turn) this.options.emit({ ...signal.event, turn: turn.id });
        return;
      case "response":
        if (!signal.success && signal.command === "prompt") {
          this.failTurn(
            new HarnessError(
              "brain_error",
              `${LABEL}: pi refused the prompt: ${signal.error ?? "no reason given"}`,
            ),
          );
        } else if (!signal.success) {
          this.warn(`pi refused "${signal.command}": ${signal.error ?? "no reason given"}`);
        }
        return;
      case "dialog":
        void this.answerDialog(signal);
        return;
      case "end":
        this.onTurnEnd(signal.end);
        return;
    }
  }

  private onTurnEnd(end: CliTurnEnd): void {
    clearTimeout(this.interruptTimer);
    if (end.outcome === "failed") return this.turn.fail(new HarnessError(end.code, end.message));
    this.turn.settle(end.outcome === "aborted");
  }

  private onExit(child: CliProcess, reason: string): void {
    if (this.child === child) this.child = undefined;
    this.failTurn(new HarnessError("brain_error", reason));
  }

  /** Extension dialogs become Brain questions; no answer (or no turn) cancels the dialog. */
  private async answerDialog(dialog: Extract<PiSignal, { kind: "dialog" }>): Promise<void> {
    const turn = this.turn.current;
    const options = dialog.options ? { options: dialog.options } : {};
    const answer = turn
      ? await this.options.ask(turn.id, { question: dialog.question, ...options }, turn.signal)
      : "";
    const response =
      answer === ""
        ? { cancelled: true }
        : dialog.method === "confirm"
          ? { confirmed: /^(y|yes|true|allow|ok)$/i.test(answer.trim()) }
          : { value: answer };
    this.send({ type: "extension_ui_response", id: dialog.id, ...response });
  }

  private failTurn(err: HarnessError): void {
    clearTimeout(this.interruptTimer);
    this.turn.fail(err);
  }

  private send(command: unknown): void {
    this.child?.write(`${JSON.stringify(command)}\n`);
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
