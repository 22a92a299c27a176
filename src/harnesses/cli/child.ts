// One CLI agent child process: spawned (behind an optional launcher prefix such as a network sandbox) with the
// environment its harness built, stdout split into lines on "\n" only, a bounded tail of stderr kept for error
// messages (stderr never reaches the event log), and a clear description of how it ended. Stdout is not read
// while the session's log is behind (see ReadGate): a CLI streaming faster than the disk commits blocks on its
// full pipe instead of growing Brain's heap.
import { spawn } from "node:child_process";
import { constants } from "node:os";
import type { Backlog } from "../../core/backlog.js";
import { tailOf } from "../../core/redact.js";
import { onText } from "../../core/stream-text.js";
import { HeadLineSplitter, type LineHead } from "../../protocol/head-lines.js";
import { LineSplitter } from "../../protocol/ndjson.js";
import { PendingChild } from "../process/pending-child.js";
import type { RunnerChild, Spawner } from "../process/spawner.js";
import { ReadGate, type WaitEnd } from "../read-gate.js";

const STDERR_TAIL_BYTES = 8 * 1024;
/** CLI output lines (a whole tool result, a long transcript replay) can be far larger than a runner frame. */
const MAX_CLI_LINE = 64 << 20;

export interface CliSpawn {
  /** The family, for messages: "claude-code". */
  label: string;
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
  /** Words put in front of the command, e.g. a sandbox: ["unshare", "-n", …, "--"]. */
  launcher?: string[];
  /** Called once per stdout line; omit for CLIs whose stdout is only a log. */
  onLine?: (line: string) => void;
  /** Shown the start of each line first: a line it takes never reaches `onLine` (see HeadLineSplitter). */
  onHead?: LineHead;
  /** The process is gone (or never started): `reason` says how, with the stderr tail. */
  onExit?: (reason: string) => void;
  /** Started by this spawn host instead of a fork of Brain (see Spawner); none: spawned here. */
  spawner?: Spawner;
  /** The log of the session its lines are emitted to: stdout is paused while it is full (see ReadGate). */
  backlog?: Backlog | undefined;
}

export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Set when the program could not be started at all. */
  error?: Error;
}

export class CliProcess {
  readonly exited: Promise<ExitInfo>;
  /** Writes and signals given while a spawn host starts it are held there until it runs. */
  private readonly pending: PendingChild;
  private tail = "";
  private exit: ExitInfo | undefined;
  private stopping = false;
  /** Holds stdout while the session's log is behind; one process serves one session. */
  private readonly gate = new ReadGate(() => this.pending.child?.stdout);
  /**
   * Pauses stdout if the session's backlog is full. Called after each chunk read; a harness that emits a line's
   * events later than its read (the ACP SDK reads its messages from a stream Brain fills) calls it after emitting.
   */
  readonly checkBacklog = () => this.gate.check("session", this.spec.backlog);

  constructor(readonly spec: CliSpawn) {
    const [command, ...prefix] = spec.launcher?.length ? spec.launcher : [spec.command];
    const args = spec.launcher?.length ? [...prefix, spec.command, ...spec.args] : spec.args;
    let settle: (exit: ExitInfo) => void = () => {};
    this.exited = new Promise((resolve) => {
      settle = (exit) => {
        if (this.exit) return;
        this.exit = exit;
        resolve(exit);
        spec.onExit?.(this.describeExit());
      };
    });
    // Its own process group, so a kill reaches the launcher, the CLI and the tools the CLI started.
    const options = { cwd: spec.cwd, env: spec.env, detached: true };
    const start = spec.spawner
      ? spec.spawner.start({ command: command!, args, ...options })
      : spawn(command!, args, { ...options, stdio: ["pipe", "pipe", "pipe"] });
    this.pending = new PendingChild({
      group: true,
      onStart: (child) => this.listen(child, settle),
      onError: (error) => settle({ code: null, signal: null, error }),
    });
    this.pending.start(start);
  }

  private listen(child: RunnerChild, settle: (exit: ExitInfo) => void): void {
    const onLine = (line: string) => this.spec.onLine?.(line);
    const splitter = this.spec.onHead
      ? new HeadLineSplitter(onLine, MAX_CLI_LINE, this.spec.onHead)
      : new LineSplitter(onLine, MAX_CLI_LINE);
    child.stdout.on("data", (chunk: Buffer) => {
      this.gate.read();
      if (!this.spec.onLine) return;
      try {
        splitter.push(chunk);
      } catch (err) {
        this.tail += `\n[brain: ${(err as Error).message}]`;
        this.kill("SIGKILL");
      }
      // A harness emits a line's events as it is read, and the session appends them in a microtask queued with
      // the first: this one comes after it, so the backlog counts the chunk.
      if (this.spec.backlog) queueMicrotask(this.checkBacklog);
    });
    // What an exited CLI wrote last is read to the end, however far the log is behind (see ReadGate.stop).
    child.on("exit", () => this.gate.stop());
    onText(child.stderr, (text) => {
      this.tail = tailOf(this.tail + text, STDERR_TAIL_BYTES);
    });
    // Drained by then; PendingChild sees to it that it comes soon after the exit, whoever else holds the pipes.
    child.on("close", (code, signal) => settle({ code, signal }));
  }

  get pid(): number | undefined {
    return this.pending.child?.pid;
  }

  /** Calls `fire` after `ms` of reading its stdout: a wait for what it answers (see ReadGate.afterRead). */
  afterRead(ms: number, fire: (end: WaitEnd) => void): () => void {
    return this.gate.afterRead(ms, fire);
  }

  get alive(): boolean {
    return this.exit === undefined;
  }

  /** True once stop() or kill() was called: an exit after that is expected, not a failure. */
  get stopRequested(): boolean {
    return this.stopping;
  }

  write(text: string): void {
    if (!this.exit) this.pending.write(text);
  }

  stderrTail(max = 2000): string {
    return tailOf(this.tail.trim(), max);
  }

  /** "claude exited with code 1; its stderr ended with: …" */
  describeExit(): string {
    const exit = this.exit;
    const name = this.spec.command.split("/").pop();
    let how = "is still running";
    if (exit?.error) how = `could not be started (${exit.error.message})`;
    else if (exit?.signal) how = `was killed by ${exit.signal}`;
    else if (exit) how = this.launchedSignal(exit.code) ?? `exited with code ${exit.code}`;
    const tail = this.stderrTail();
    return `${this.spec.label}: ${name} ${how}${tail ? `; its stderr ended with: ${tail}` : ""}`;
  }

  /**
   * A launcher (a network namespace's, `docker exec`) whose child a signal ended exits with 128 + its number, as a
   * shell does; "exited with code 137" hides a kill -9 (the OOM killer) that the signal's name makes plain.
   */
  private launchedSignal(code: number | null): string | undefined {
    if (!this.spec.launcher?.length || code === null || code <= 128) return undefined;
    const name = Object.entries(constants.signals).find(([, n]) => n === code - 128)?.[0];
    return name ? `was killed by ${name} (exit code ${code})` : undefined;
  }

  kill(signal: NodeJS.Signals = "SIGTERM"): void {
    this.stopping = true;
    if (!this.exit) this.pending.signal(signal);
  }

  /** Closes stdin (most CLIs exit on EOF), then SIGTERM, then SIGKILL, each after `graceMs`. */
  async stop(graceMs = 3000): Promise<void> {
    this.stopping = true;
    if (this.exit) return;
    this.pending.end();
    for (const signal of [undefined, "SIGTERM", "SIGKILL"] as const) {
      if (signal) this.kill(signal);
      if (await this.exitsWithin(graceMs)) return;
    }
  }

  /** True once the process has gone, false when `ms` pass first. */
  async exitsWithin(ms: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), ms).unref();
    });
    const gone = await Promise.race([this.exited.then(() => true as const), late]);
    clearTimeout(timer);
    return gone;
  }
}

/** A running program and where Brain reads what it answers. */
export interface AnswerSource {
  readonly child: CliProcess;
  /**
   * Calls `fire` after `ms` of Brain reading where the program answers (see ReadGate.afterRead); returns what
   * cancels it. Default: its stdout. A program that answers elsewhere (opencode: its event stream, which a read
   * gate of its own holds) counts on that, or its silence while Brain reads nothing there is blamed on it.
   */
  afterRead?(ms: number, fire: (end: WaitEnd) => void): () => void;
}

/** Calls `fire` after `ms` of reading what `source` answers; after `ms`, when none runs yet. */
export function afterRead(
  source: AnswerSource | undefined,
  ms: number,
  fire: (end: WaitEnd) => void,
): () => void {
  if (source?.afterRead) return source.afterRead(ms, fire);
  if (source) return source.child.afterRead(ms, fire);
  const timer = setTimeout(() => fire("silent"), ms);
  return () => clearTimeout(timer);
}

/** The message, with the end of the program's stderr when it wrote any. */
export function withTail(message: string, child: CliProcess): string {
  const tail = child.stderrTail();
  return tail ? `${message}; its stderr ended with: ${tail}` : message;
}
