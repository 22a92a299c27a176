// One Claude Code session: a long-lived `claude -p` speaking stream-json both ways, started at the first prompt
// (opening is passive) and again, with `--resume`, whenever it has gone away. Prompts are `user` lines; an
// interrupt is a `control_request`; `can_use_tool` requests are answered through Brain's permission policy, which
// is also given to the CLI up front (./policy.ts) so that the tools it would run unasked are gated too.
// Claude reads a user line sent mid-turn only after its current turn, so a steer is queued (by CliHarness) and
// sent when the CLI's turn ends, inside the same Brain turn.
import { randomUUID } from "node:crypto";
import { join, relative } from "node:path";
import { refused } from "../../core/checkpoints/errors.js";
import { type ExpectedHistory, HarnessError } from "../../core/harness.js";
import { missingHistory } from "../../core/native-check.js";
import { preview } from "../../protocol/frames.js";
import type { NativeFile } from "../../protocol/runner.js";
import { makeAgentDirSync, writeAgentFileSync } from "../agent-files.js";
import { isMcpEndpointTool } from "../cli/bound.js";
import type { CliProcess } from "../cli/child.js";
import type { CliOpening } from "../cli/family.js";
import { listNativeFiles, readJsonFile, writeJsonFile } from "../cli/files.js";
import { type CliContext, CliHarness, prepareCli } from "../cli/harness.js";
import { anthropicBaseUrl, ownVendorWire } from "../cli/provider-api.js";
import { proxyVariable } from "../cli/proxy-variable.js";
import type { CliProvider } from "../cli/services.js";
import { unknownTypeWarning } from "../cli/unknown-types.js";
import { BOUND_ENV, boundArgs, endpointWarning } from "./bound.js";
import { interruptRequest, permissionResponse, unsupportedControl, userMessage } from "./messages.js";
import { type ClaudeSignal, ClaudeStreamParser } from "./parser.js";
import { claudeToolArgs, claudeToolRules } from "./policy.js";
import {
  CLAUDE_SESSION_ID,
  NotRegularFile,
  placeTranscript,
  recordWritten,
  TRANSCRIPT_WAIT_MS,
  transcriptPath,
} from "./transcripts.js";

/** Brain's record of which Claude session this native dir holds. */
export const STATE_FILE = "claude-code.json";
/** CLAUDE_CONFIG_DIR, relative to the native dir. */
export const CONFIG_DIR = "claude";
/** The session's system prompt, in the config dir, for `--append-system-prompt-file`. */
const SYSTEM_PROMPT_FILE = "append-system-prompt.md";

/**
 * `claude -p` as a stream-json peer: user lines in, every event out (partial messages included), permission
 * prompts asked over stdio. Shared with the bench's bare-claude baseline, so both run the same CLI mode.
 */
export const STREAM_JSON_ARGS: readonly string[] = [
  "-p",
  "--input-format",
  "stream-json",
  "--output-format",
  "stream-json",
  "--verbose",
  "--include-partial-messages",
  "--permission-prompt-tool",
  "stdio",
];

interface ClaudeState {
  session_id: string;
}

export class ClaudeCodeHarness extends CliHarness<{ child: CliProcess }> {
  private parser = new ClaudeStreamParser();
  /** Interrupts written and not yet answered, by request id (abort()). */
  private readonly interrupts = new Map<string, () => void>();

  private constructor(
    ctx: CliContext,
    private state: ClaudeState,
  ) {
    super(ctx);
  }

  /** Passive: prepares directories and state, moves a relocated transcript; starts nothing. */
  static async open(opening: CliOpening): Promise<ClaudeCodeHarness> {
    ownVendorWire(opening.family, opening.options.provider, { speaks: ["messages"], openai: "chat" });
    const ctx = prepareCli(opening, STATE_FILE);
    const { dir } = opening.options;
    makeAgentDirSync(dir, CONFIG_DIR, opening.options.container?.user);
    let state = await readJsonFile<ClaudeState>(dir, STATE_FILE);
    if (state?.session_id && !CLAUDE_SESSION_ID.test(state.session_id))
      throw new HarnessError(
        "brain_error",
        `${opening.family.harness}: ${STATE_FILE} names the Claude session "${preview(state.session_id, 80)}", which is not a ` +
          "session id (letters, digits, '-' and '_'); something in the session changed it: rebuild the session's " +
          "native state from its log (brain sessions rebuild ID)",
      );
    if (!state?.session_id) {
      state = { session_id: randomUUID() };
      await writeJsonFile(dir, STATE_FILE, state);
    }
    placeTranscript(dir, join(dir, CONFIG_DIR), ctx.cwd, state.session_id, opening.options.container?.user);
    return new ClaudeCodeHarness(ctx, state);
  }

  protected async connect(): Promise<{ child: CliProcess }> {
    const { base_url } = this.options.provider;
    const provider = await this.provider("messages", base_url ? anthropicBaseUrl(base_url) : undefined);
    if (!this.ctx.bound)
      return this.start(claudeToolArgs(claudeToolRules(this.options.policy)), {}, provider);
    return this.start(boundArgs(await this.toolEndpoint()), BOUND_ENV, provider);
  }

  protected override isEndpointTool(name: string): boolean {
    return isMcpEndpointTool(name);
  }

  private start(
    extraArgs: string[],
    extraEnv: Record<string, string>,
    provider: CliProvider,
  ): { child: CliProcess } {
    const configDir = join(this.options.dir, CONFIG_DIR);
    const resume = placeTranscript(
      this.options.dir,
      configDir,
      this.ctx.cwd,
      this.state.session_id,
      this.options.container?.user,
    );
    const args = [
      ...STREAM_JSON_ARGS,
      resume ? "--resume" : "--session-id",
      this.state.session_id,
      ...extraArgs,
    ];
    const { model, system_prompt } = this.options.config;
    if (model) args.push("--model", model);
    if (system_prompt) {
      // As a file of Brain's: one argument is at most 128 KiB on Linux, and a longer prompt failed every start (E2BIG).
      const file = join(configDir, SYSTEM_PROMPT_FILE);
      writeAgentFileSync(this.options.dir, file, system_prompt, 0o600, this.options.container?.user);
      args.push("--append-system-prompt-file", file);
    }
    args.push(...(this.ctx.session.args ?? []));
    const env = this.environment({
      CLAUDE_CONFIG_DIR: configDir,
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
      DISABLE_AUTOUPDATER: "1",
      DISABLE_TELEMETRY: "1",
      ...(provider.base_url ? { ANTHROPIC_BASE_URL: provider.base_url } : {}),
      ...(provider.api_key ? { ANTHROPIC_API_KEY: provider.api_key } : {}),
      ...proxyVariable(provider),
      ...extraEnv,
    });
    this.parser = new ClaudeStreamParser();
    const child = this.spawn(args, env, (line) => {
      const warning = this.ctx.bound ? endpointWarning(line) : undefined;
      if (warning) this.warn(warning);
      for (const signal of this.parser.handle(line)) this.onSignal(signal);
    });
    return { child };
  }

  protected send(_connection: unknown, text: string): void {
    this.write(userMessage(text, this.state.session_id));
  }

  /** Answered (a control_response) once Claude Code has aborted its turn: a tool result after it is dropped. */
  protected abort(): Promise<void> {
    const request = interruptRequest();
    this.write(request);
    const answered = new Promise<void>((resolve) => this.interrupts.set(request.request_id, resolve));
    // Claude Code may end its turn without answering (CliHarness.interrupt then waits for the turn's end): the
    // entry goes with the turn (a close ends it too), or each unanswered interrupt would be kept for good.
    void this.turn.current?.ended.then(() => this.interrupts.delete(request.request_id));
    return answered;
  }

  /** How many interrupts are written and neither answered nor ended with their turn (none once a turn ended). */
  get pendingInterrupts(): number {
    return this.interrupts.size;
  }

  /**
   * Claude Code prints a turn's `result` before its buffered transcript writer has appended the turn's last
   * message, so a checkpoint taken as soon as the turn settles would list the transcript short of it (and the
   * size check refuses it once the write lands). Wait until the record of the last message the CLI printed is
   * on disk: a checkpoint then holds the whole turn, not merely a consistent prefix without its answer.
   */
  override async checkpoint(): Promise<NativeFile[]> {
    await this.transcriptWritten();
    return super.checkpoint();
  }

  private async transcriptWritten(): Promise<void> {
    const uuid = this.parser.lastRecord;
    if (!uuid) return;
    const configDir = join(this.options.dir, CONFIG_DIR);
    const file = transcriptPath(configDir, this.ctx.cwd, this.state.session_id);
    const child = this.connection?.child;
    const written = await recordWritten(file, uuid, () => child?.alive === true).catch((err: unknown) => {
      if (!(err instanceof NotRegularFile)) throw err;
      throw refused(
        relative(this.options.dir, file),
        `it is ${err.kind}, not the regular file Claude Code writes its transcript to; something in the session ` +
          "replaced it: rebuild the session's native state from its log (brain sessions rebuild ID)",
      );
    });
    if (written) return;
    // Not fatal: the checkpoint goes on, and its size check refuses a transcript that is still being written.
    this.warn(
      `its transcript did not record the turn's last message (${uuid}) within ${TRANSCRIPT_WAIT_MS} ms`,
    );
  }

  /** The transcript for this session id, in the folder for the current cwd (where `--resume` looks). */
  async verify(expected: ExpectedHistory): Promise<string | undefined> {
    const configDir = join(this.options.dir, CONFIG_DIR);
    placeTranscript(
      this.options.dir,
      configDir,
      this.ctx.cwd,
      this.state.session_id,
      this.options.container?.user,
    );
    const file = transcriptPath(configDir, this.ctx.cwd, this.state.session_id);
    return missingHistory("the Claude Code transcript", this.options.dir, [file], expected);
  }

  protected nativeFiles(): Promise<NativeFile[]> {
    return listNativeFiles(this.options.dir, `${CONFIG_DIR}/projects`, {
      appendOnly: (path) => path.endsWith(".jsonl"),
    });
  }

  private onSignal(signal: ClaudeSignal): void {
    switch (signal.kind) {
      case "event":
        return this.emitEvent(signal.event);
      case "session":
        if (!CLAUDE_SESSION_ID.test(signal.id)) {
          this.warn(
            `ignored the session id "${preview(signal.id, 80)}" the CLI reported: not a plain name, as its ids are`,
          );
          return;
        }
        if (signal.id !== this.state.session_id) {
          this.state = { session_id: signal.id };
          // A rejection here would be unhandled, which ends the daemon; the session goes on and says so instead.
          this.writeState(this.state).catch((err: NodeJS.ErrnoException) =>
            this.warn(
              `could not record Claude Code's session id ${signal.id} in ${STATE_FILE} (${err.code ?? err.message}); ` +
                "after a restart the session resumes the conversation recorded before",
            ),
          );
        }
        return;
      case "permission":
        void this.answerPermission(signal);
        return;
      case "control-unsupported":
        this.write(unsupportedControl(signal));
        return;
      case "control-response":
        if (signal.error) this.warn(`the CLI refused a control request: ${signal.error}`);
        this.interrupts.get(signal.requestId)?.();
        this.interrupts.delete(signal.requestId);
        return;
      case "end":
        return this.endTurn(signal.end);
      case "unknown":
        return this.warn(unknownTypeWarning("claude", signal.type, "a line"));
    }
  }

  private async answerPermission(signal: Extract<ClaudeSignal, { kind: "permission" }>): Promise<void> {
    const verdict = await this.permit({
      tool: signal.tool,
      arguments: signal.input,
      ...(signal.reason ? { reason: signal.reason } : {}),
      ...(signal.toolUseId ? { tool_call_id: signal.toolUseId } : {}),
    });
    this.write(permissionResponse(signal, verdict));
  }

  private write(message: unknown): void {
    this.connection?.child.write(`${JSON.stringify(message)}\n`);
  }
}
