// One Claude Code session: a long-lived `claude -p` speaking stream-json both ways, started at the first prompt
// (opening is passive) and again, with `--resume`, whenever it has gone away. Prompts are `user` lines; an
// interrupt is a `control_request`; `can_use_tool` requests are answered through Brain's permission policy.
// Claude reads a user line sent mid-turn only after its current turn, so a steer is queued and sent when
// the CLI's turn ends, inside the same Brain turn.
import { randomUUID } from "node:crypto";
import { mkdirSync } from "node:fs";
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
import { type ClaudeSignal, ClaudeStreamParser } from "./parser.js";
import { placeTranscript } from "./transcripts.js";

const LABEL = "claude-code";
/** Brain's record of which Claude session this native dir holds. */
export const STATE_FILE = "claude-code.json";
/** CLAUDE_CONFIG_DIR, relative to the native dir. */
export const CONFIG_DIR = "claude";
const INTERRUPT_GRACE_MS = 10_000;

interface ClaudeState {
  session_id: string;
}

export interface ClaudeCodeTimeouts {
  /** How long an interrupted turn may take to end before the CLI is killed. */
  interruptGraceMs: number;
}

/** The Anthropic SDK's base URL has no /v1: it adds that itself. */
export function anthropicBaseUrl(url: string): string {
  return url.replace(/\/+$/, "").replace(/\/v1$/, "");
}

const ANTHROPIC_APIS = new Set(["anthropic", "anthropic-messages", "messages"]);

export class ClaudeCodeHarness implements Harness {
  private child: CliProcess | undefined;
  private parser = new ClaudeStreamParser();
  private readonly turn = new TurnSlot();
  private queued: string[] = [];
  private interruptTimer: NodeJS.Timeout | undefined;
  private closed = false;

  private constructor(
    private readonly options: HarnessOptions,
    private readonly program: string,
    private readonly host: CliFactoryOptions,
    private readonly session: CliSessionOptions,
    private readonly cwd: string,
    private state: ClaudeState,
    private readonly timeouts: ClaudeCodeTimeouts,
  ) {}

  /** Passive: prepares directories and state, moves a relocated transcript; starts nothing. */
  static async open(
    options: HarnessOptions,
    program: string,
    host: CliFactoryOptions,
    timeouts: Partial<ClaudeCodeTimeouts> = {},
  ): Promise<ClaudeCodeHarness> {
    const api = options.provider.api;
    if (api !== undefined && !ANTHROPIC_APIS.has(api)) {
      throw new HarnessError(
        "brain_error",
        `${LABEL}: Claude Code speaks only the Anthropic Messages API, but the provider's api is "${api}"; ` +
          'use "anthropic" (or leave it out) with an Anthropic-compatible base_url',
      );
    }
    const session = sessionOptions(LABEL, options.config);
    const cwd = workingDir(LABEL, options.dir, session);
    mkdirSync(join(options.dir, CONFIG_DIR), { recursive: true });
    const stateFile = join(options.dir, STATE_FILE);
    let state = await readJsonFile<ClaudeState>(stateFile);
    if (!state?.session_id) {
      state = { session_id: randomUUID() };
      await writeJsonFile(stateFile, state);
    }
    placeTranscript(join(options.dir, CONFIG_DIR), cwd, state.session_id);
    if (options.tools.length > 0) {
      options.emit({
        type: "harness.warning",
        data: {
          message: `${LABEL}: Claude Code runs its own tools; the session's bound tools (${options.tools
            .map((t) => t.name)
            .join(", ")}) are not offered to it`,
        },
      });
    }
    return new ClaudeCodeHarness(options, program, host, session, cwd, state, {
      interruptGraceMs: timeouts.interruptGraceMs ?? INTERRUPT_GRACE_MS,
    });
  }

  async prompt(text: string, ctx: TurnContext): Promise<PromptOutcome> {
    const done = this.turn.begin(ctx);
    try {
      this.ensureProcess();
      this.sendUser(text);
    } catch (err) {
      this.turn.fail(err instanceof HarnessError ? err : new HarnessError("brain_error", String(err)));
    }
    return done;
  }

  async steer(text: string, turn: string): Promise<void> {
    if (this.turn.current?.id !== turn) return;
    this.queued.push(text);
  }

  async interrupt(turn: string): Promise<void> {
    const running = this.turn.current;
    if (!running || running.id !== turn || running.interrupted) return;
    running.interrupted = true;
    this.queued = [];
    this.send({
      type: "control_request",
      request_id: `interrupt-${randomUUID()}`,
      request: { subtype: "interrupt" },
    });
    this.interruptTimer = setTimeout(() => {
      if (this.turn.current !== running) return;
      this.warn(
        `the CLI did not end the interrupted turn within ${this.timeouts.interruptGraceMs} ms; killed it`,
      );
      this.child?.kill("SIGKILL");
    }, this.timeouts.interruptGraceMs);
  }

  async checkpoint(): Promise<NativeFile[]> {
    const transcripts = await listNativeFiles(this.options.dir, `${CONFIG_DIR}/projects`, {
      appendOnly: (path) => path.endsWith(".jsonl"),
    });
    const state = await listNativeFiles(this.options.dir, ".", {
      include: (path) => path === STATE_FILE,
      appendOnly: () => false,
    });
    return [...state, ...transcripts];
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.interruptTimer);
    this.turn.fail(new HarnessError("brain_error", `${LABEL}: the session closed`));
    const child = this.child;
    this.child = undefined;
    await child?.stop();
  }

  private ensureProcess(): void {
    if (this.closed) throw new HarnessError("brain_error", `${LABEL}: the harness is closed`);
    if (this.child?.alive) return;
    const configDir = join(this.options.dir, CONFIG_DIR);
    const resume = placeTranscript(configDir, this.cwd, this.state.session_id);
    const args = [
      "-p",
      "--input-format",
      "stream-json",
      "--output-format",
      "stream-json",
      "--verbose",
      "--include-partial-messages",
      "--permission-prompt-tool",
      "stdio",
      resume ? "--resume" : "--session-id",
      this.state.session_id,
    ];
    const { model, system_prompt } = this.options.config;
    if (model) args.push("--model", model);
    if (system_prompt) args.push("--append-system-prompt", system_prompt);
    args.push(...(this.session.args ?? []));
    const { provider } = this.options;
    const env = cliEnvironment(
      this.options.dir,
      {
        CLAUDE_CONFIG_DIR: configDir,
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
        DISABLE_AUTOUPDATER: "1",
        DISABLE_TELEMETRY: "1",
        ...(provider.base_url ? { ANTHROPIC_BASE_URL: anthropicBaseUrl(provider.base_url) } : {}),
        ...(provider.api_key ? { ANTHROPIC_API_KEY: provider.api_key } : {}),
      },
      this.host.env,
    );
    this.parser = new ClaudeStreamParser();
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
    if (line.trim() === "") return;
    let decoded: unknown;
    try {
      decoded = JSON.parse(line);
    } catch {
      const message = `${LABEL}: claude wrote a line that is not JSON on stdout: ${preview(line)}`;
      child.kill("SIGKILL");
      const tail = child.stderrTail();
      return this.failTurn("brain_error", tail ? `${message}; its stderr ended with: ${tail}` : message);
    }
    for (const signal of this.parser.handle(decoded)) this.onSignal(signal);
  }

  private onSignal(signal: ClaudeSignal): void {
    switch (signal.kind) {
      case "event": {
        const turn = this.turn.current;
        if (turn) this.options.emit({ ...signal.event, turn: turn.id });
        return;
      }
      case "session":
        if (signal.id !== this.state.session_id) {
          this.state = { session_id: signal.id };
          void writeJsonFile(join(this.options.dir, STATE_FILE), this.state);
        }
        return;
      case "permission":
        void this.answerPermission(signal);
        return;
      case "control-unsupported":
        this.send({
          type: "control_response",
          response: {
            subtype: "error",
            request_id: signal.requestId,
            error: `Brain does not serve "${signal.subtype}" control requests`,
          },
        });
        return;
      case "control-response":
        if (signal.error) this.warn(`the CLI refused a control request: ${signal.error}`);
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
      this.sendUser(this.queued.shift()!);
      return;
    }
    clearTimeout(this.interruptTimer);
    this.queued = [];
    if (end.outcome === "failed" && !turn.interrupted)
      return this.turn.fail(new HarnessError(end.code, end.message));
    this.turn.settle(end.outcome === "aborted");
  }

  private onExit(child: CliProcess, reason: string): void {
    if (this.child === child) this.child = undefined;
    // Between turns an exit is harmless: the next prompt starts the CLI again with --resume.
    this.failTurn("brain_error", reason);
  }

  private failTurn(code: "provider_error" | "brain_error", message: string): void {
    clearTimeout(this.interruptTimer);
    this.queued = [];
    this.turn.fail(new HarnessError(code, message));
  }

  private async answerPermission(signal: Extract<ClaudeSignal, { kind: "permission" }>): Promise<void> {
    const turn = this.turn.current;
    const verdict = turn
      ? await this.options.permit(
          turn.id,
          { tool: signal.tool, arguments: signal.input, ...(signal.reason ? { reason: signal.reason } : {}) },
          turn.signal,
        )
      : { decision: "deny" as const, reason: "no turn is running" };
    const response =
      verdict.decision === "allow"
        ? { behavior: "allow", updatedInput: signal.input }
        : { behavior: "deny", message: verdict.reason ?? "denied by the session's permission policy" };
    this.send({
      type: "control_response",
      response: { subtype: "success", request_id: signal.requestId, response },
    });
  }

  private sendUser(text: string): void {
    this.send({
      type: "user",
      message: { role: "user", content: text },
      parent_tool_use_id: null,
      session_id: this.state.session_id,
    });
  }

  private send(message: unknown): void {
    this.child?.write(`${JSON.stringify(message)}\n`);
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
