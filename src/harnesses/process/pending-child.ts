// A child process that a spawn host may still be starting (see Spawner). Its owner (RunnerProcess, CliProcess,
// HostProcess) can write to it, end its stdin and signal it from the moment it is asked for; what comes before
// the child exists is held and applied, in order, once it does: the signal, then the writes, then the end of
// stdin. One copy of that bookkeeping, so the three owners cannot drift apart on it.
//
// It also makes sure an exit is seen. Owners wait for the child's "close" (stdout and stderr drained, so no
// last line is lost), and "close" waits for every process holding those pipes: one the child left running
// behind it (`tool &`, a wrapper's agent) keeps them open, and the owner would take a dead child for a live one
// until that process exits, for a daemon never. So after the exit, output is read a little longer; then the
// child's group is killed and its pipes are closed from here, and "close" follows.
//
// Whatever ends the child (its stdin closed, a signal, its own exit), its group goes with it: at "close" what it
// left running in its group (a tool's `sleep &` with its output elsewhere, which holds no pipe) is killed too.
// The group outlives its leader while any member lives, so the kill reaches them after the leader is reaped.
import type { RunnerChild } from "./spawner.js";

/** How long output is still read after the child's exit. What it wrote before it exited is read in far less. */
export const EXIT_DRAIN_MS = 250;

export interface PendingChildOptions {
  /** Signals go to the child's process group (it was started detached), falling back to the child alone. */
  group: boolean;
  /** The child is there: attach listeners. Runs before anything held is applied, so no output is missed. */
  onStart(child: RunnerChild): void;
  /** It could not be started: the spawn host's refusal, or the child's own "error" (a failed spawn). */
  onError(err: Error): void;
}

export class PendingChild {
  /** Undefined until started (or for good, when it could not be). */
  child: RunnerChild | undefined;
  private held: (string | Buffer)[] = [];
  private ended = false;
  private signalled: NodeJS.Signals | undefined;
  private drain: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(private readonly options: PendingChildOptions) {}

  /**
   * Takes the child, or the promise of it. Apart from the constructor so that an owner can keep this object
   * before `onStart` runs (it runs at once for a child already spawned).
   */
  start(start: RunnerChild | Promise<RunnerChild>): void {
    if ("then" in start) start.then((child) => this.adopt(child), this.options.onError);
    else this.adopt(start);
  }

  private adopt(child: RunnerChild): void {
    this.child = child;
    // EPIPE after the child died: its owner reports the exit itself, with the stderr tail.
    child.stdin.on("error", () => {});
    child.on("error", this.options.onError);
    this.options.onStart(child);
    child.on("exit", () => this.exited(child));
    child.on("close", () => {
      this.closed = true;
      clearTimeout(this.drain);
      if (this.options.group) this.signal("SIGKILL");
    });
    if (!this.running) this.exited(child); // it exited before it was handed over (a runner claimed late)
    if (this.signalled) this.signal(this.signalled);
    for (const data of this.held) child.stdin.write(data);
    this.held = [];
    if (this.ended) child.stdin.end();
  }

  /** Whether it has not exited (true while it is being started). */
  get running(): boolean {
    return !this.child || (this.child.exitCode === null && this.child.signalCode === null);
  }

  /** Its pipes are closed after EXIT_DRAIN_MS unless "close" came first (nothing else held them). */
  private exited(child: RunnerChild): void {
    if (this.drain) return;
    this.drain = setTimeout(() => {
      // One more pass of the event loop's poll phase first: had the loop been too busy to read the pipe since the
      // exit, this timer would otherwise run before the read and drop what the child wrote last.
      setImmediate(() => {
        if (this.closed) return;
        // What it left behind holds the pipes: it goes with the child, as on a kill of the child.
        this.signal("SIGKILL");
        // Something outside its group (setsid) may hold them still; Brain stops listening either way.
        child.stdout.destroy();
        child.stderr.destroy();
      });
    }, EXIT_DRAIN_MS);
  }

  write(data: string | Buffer): void {
    if (this.ended) return;
    if (!this.child) this.held.push(data);
    else if (!this.child.stdin.destroyed) this.child.stdin.write(data);
  }

  /** Closes its stdin after what was written. */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.child?.stdin.end();
  }

  /** Sends `signal` now, or once it is started (a SIGKILL held replaces any gentler one). */
  signal(signal: NodeJS.Signals): void {
    const child = this.child;
    if (!child) {
      if (signal === "SIGKILL" || !this.signalled) this.signalled = signal;
      return;
    }
    if (this.options.group && child.pid !== undefined) {
      try {
        process.kill(-child.pid, signal);
        return;
      } catch {
        // No group left (all exited), or no process groups here (Windows): the child alone.
      }
    }
    if (this.running) child.kill(signal);
  }
}
