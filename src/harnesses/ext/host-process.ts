// An extension host child process: started with the environment Brain decides, its stderr kept as a bounded
// tail for error messages (never logged as events), its exit reported once. stdio hosts speak JSON-RPC on its
// stdin/stdout; TCP and HTTP hosts are only started here and reached through their connection file.
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { HarnessError } from "../../core/harness.js";
import { tailOf } from "../../core/redact.js";
import { findMissing } from "../process/command.js";

const STDERR_TAIL_BYTES = 8 * 1024;

export interface HostCommand {
  /** For messages: `ext:<extension>/<id>`. */
  name: string;
  command: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
}

export class HostProcess {
  readonly child: ChildProcessWithoutNullStreams;
  private stderrTail = "";
  private exitReason: string | undefined;
  readonly exited: Promise<string>;

  /** Throws a HarnessError naming what is missing when the program or its script does not exist. */
  constructor(readonly spec: HostCommand) {
    const missing = findMissing(spec.command, spec.args, spec.cwd, spec.env.PATH ?? process.env.PATH ?? "");
    if (missing) throw new HarnessError("brain_error", `extension host for ${spec.name}: ${missing}`);
    this.child = spawn(spec.command, spec.args, {
      cwd: spec.cwd,
      env: spec.env,
      stdio: ["pipe", "pipe", "pipe"],
    });
    this.child.stderr.on("data", (chunk: Buffer) => {
      this.stderrTail = tailOf(this.stderrTail + chunk.toString("utf8"), STDERR_TAIL_BYTES);
    });
    // EPIPE after the host died: the exit below reports it, with its stderr.
    this.child.stdin.on("error", () => {});
    this.exited = new Promise((resolve) => {
      this.child.once("error", (err) => {
        this.exitReason ??= `could not start "${spec.command}": ${err.message}`;
        resolve(this.exitReason);
      });
      // "close": stdout and stderr are drained by then, so no last line is lost.
      this.child.once("close", (code, signal) => {
        this.exitReason ??= signal
          ? `extension host for ${spec.name} was killed by ${signal}`
          : `extension host for ${spec.name} exited with code ${code}`;
        resolve(this.exitReason);
      });
    });
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get alive(): boolean {
    return this.exitReason === undefined;
  }

  /** `reason` with the last of the host's stderr, for an error message a user can act on. */
  describe(reason: string): string {
    const tail = this.stderrTail.trim();
    return tail ? `${reason}; its stderr ended with: ${tailOf(tail, 1000)}` : reason;
  }

  /** Closes stdin, then SIGTERM, then SIGKILL, each after `graceMs`. */
  async stop(graceMs = 2000): Promise<void> {
    if (!this.alive) return;
    this.child.stdin.end();
    const term = setTimeout(() => this.child.kill("SIGTERM"), graceMs);
    const kill = setTimeout(() => this.child.kill("SIGKILL"), graceMs * 2);
    await this.exited;
    clearTimeout(term);
    clearTimeout(kill);
  }

  kill(): void {
    if (this.alive) this.child.kill("SIGKILL");
  }
}
