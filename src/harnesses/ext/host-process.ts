// An extension host child process: started with the environment Brain decides, its stderr kept as a bounded
// tail for error messages (never logged as events), its exit reported once. stdio hosts speak JSON-RPC on its
// stdin/stdout; TCP and HTTP hosts are only started here and reached through their connection file. Started by
// the catalog's spawn host when there is one (see Spawner), so what is written or asked before it runs waits.
import { spawn } from "node:child_process";
import { HarnessError } from "../../core/harness.js";
import { envSecrets, Redactor, type Secret, tailOf } from "../../core/redact.js";
import { onText } from "../../core/stream-text.js";
import { findMissing } from "../process/command.js";
import { PendingChild } from "../process/pending-child.js";
import type { RunnerChild, Spawner } from "../process/spawner.js";
import type { Pausable } from "../read-gate.js";

const STDERR_TAIL_BYTES = 8 * 1024;
/** How long a host whose stdout ended may take to exit before it is taken for one that closed it and lives on. */
const STDOUT_ENDED_GRACE_MS = 1000;

export interface HostCommand {
  /** For messages: `ext:<extension>/<id>`. */
  name: string;
  command: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
}

export class HostProcess {
  /** Writes and signals given while the spawn host starts it are held there until it runs. */
  private readonly pending: PendingChild;
  private readonly readers: ((chunk: Buffer) => void)[] = [];
  private readonly exitListeners: (() => void)[] = [];
  private readonly stdoutClosedListeners: (() => void)[] = [];
  private stderrTail = "";
  /** Its stderr goes into turn errors, which are logged: what it was given as a secret is taken out first. */
  private readonly redactor: Redactor;
  private exitReason: string | undefined;
  readonly exited: Promise<string>;

  /**
   * Throws a HarnessError naming what is missing when the program or its script does not exist. `spawner`: where
   * it is started; none: forked from Brain.
   */
  constructor(
    readonly spec: HostCommand,
    spawner?: Spawner,
  ) {
    const missing = findMissing(spec.command, spec.args, spec.cwd, spec.env.PATH ?? process.env.PATH ?? "");
    if (missing) throw new HarnessError("brain_error", `extension host for ${spec.name}: ${missing}`);
    this.redactor = new Redactor(hostSecrets(spec.env));
    let settle: (reason: string) => void = () => {};
    this.exited = new Promise((resolve) => {
      settle = (reason) => {
        this.exitReason ??= reason;
        resolve(this.exitReason);
      };
    });
    const couldNot = (err: Error) => settle(`could not start "${spec.command}": ${err.message}`);
    // Its own process group, as runners and CLIs have: hosts are often started through a wrapper (uv run, npx,
    // a shell) whose agent is a child of its own, and a signal to the wrapper alone would leave the agent running,
    // holding the pipes, so that stop() would wait for it forever.
    const options = { cwd: spec.cwd, env: spec.env, detached: true };
    const start = spawner
      ? spawner.start({ command: spec.command, args: spec.args, ...options })
      : spawn(spec.command, spec.args, { ...options, stdio: ["pipe", "pipe", "pipe"] });
    this.pending = new PendingChild({
      group: true,
      onStart: (child) => this.listen(child, settle),
      onError: couldNot,
    });
    this.pending.start(start);
  }

  private listen(child: RunnerChild, settle: (reason: string) => void): void {
    onText(child.stderr, (text) => {
      this.stderrTail = tailOf(this.stderrTail + text, STDERR_TAIL_BYTES);
    });
    for (const reader of this.readers) child.stdout.on("data", reader);
    // A host that closed its stdout and lives on can never answer (as a runner: see RunnerProcess): an exiting one
    // closes within the grace, and its exit says more.
    let stdoutEnded: NodeJS.Timeout | undefined;
    child.stdout.on("end", () => {
      stdoutEnded = setTimeout(() => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        for (const listener of this.stdoutClosedListeners) listener();
      }, STDOUT_ENDED_GRACE_MS);
      stdoutEnded.unref();
    });
    child.on("exit", () => {
      clearTimeout(stdoutEnded);
      for (const listener of this.exitListeners) listener();
    });
    // "close": stdout and stderr are drained by then, so no last line is lost; PendingChild sees to it that it
    // comes soon after the exit, whoever else holds the pipes.
    child.on("close", (code, signal) =>
      settle(
        signal
          ? `extension host for ${this.spec.name} was killed by ${signal}`
          : `extension host for ${this.spec.name} exited with code ${code}`,
      ),
    );
  }

  get pid(): number | undefined {
    return this.pending.child?.pid;
  }

  get alive(): boolean {
    return this.exitReason === undefined;
  }

  /** Writes to its stdin (once it runs). */
  write(text: string): void {
    if (this.alive) this.pending.write(text);
  }

  /** Bytes written to its stdin that it has not read yet. */
  get queued(): number {
    return this.pending.child?.stdin.writableLength ?? 0;
  }

  /** Its stdout, once it runs: to pause reading it (see ReadGate). */
  get stdout(): Pausable | undefined {
    return this.pending.child?.stdout;
  }

  /**
   * Called at the process's exit, before its pipes are drained: its stdout is resumed then and read for
   * EXIT_DRAIN_MS more (PendingChild), so whoever paused reading it stops holding it.
   */
  onExit(listener: () => void): void {
    this.exitListeners.push(listener);
  }

  /** Called when its stdout ended and the process still ran STDOUT_ENDED_GRACE_MS later. */
  onStdoutClosed(listener: () => void): void {
    this.stdoutClosedListeners.push(listener);
  }

  /** Reads its stdout (from its start). */
  onStdout(reader: (chunk: Buffer) => void): void {
    this.readers.push(reader);
    this.pending.child?.stdout.on("data", reader);
  }

  /** `reason` with the last of the host's stderr, for an error message a user can act on. */
  describe(reason: string): string {
    const tail = this.redactor.redact(this.stderrTail).trim();
    return tail ? `${reason}; its stderr ended with: ${tailOf(tail, 1000)}` : reason;
  }

  /** Closes stdin, then SIGTERM, then SIGKILL to its group, each after `graceMs`. */
  async stop(graceMs = 2000): Promise<void> {
    if (!this.alive) return;
    this.pending.end();
    const term = setTimeout(() => this.pending.signal("SIGTERM"), graceMs);
    const kill = setTimeout(() => this.pending.signal("SIGKILL"), graceMs * 2);
    await this.exited;
    clearTimeout(term);
    clearTimeout(kill);
  }

  kill(): void {
    if (this.alive) this.pending.signal("SIGKILL");
  }
}

/**
 * A host's secrets: its secret-named variables, and the first path segment of NUI_API_URL, the token that reaches
 * its sessions' HITL requests (Brain's redactor, made before the session's host, does not know it).
 */
export function hostSecrets(env: Record<string, string>): Secret[] {
  const secrets = envSecrets(env);
  const api = env.NUI_API_URL;
  if (api && URL.canParse(api)) {
    const token = new URL(api).pathname.split("/").find((part) => part !== "");
    if (token) secrets.push({ name: "NUI_API_URL token", value: token });
  }
  return secrets;
}
