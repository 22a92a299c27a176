// Warm runners: processes started ahead of need, not yet opened, so a new session skips the process start (Node
// boot, the runner's imports). A spare holds no secret: it gets the same minimal environment as any runner, and
// credentials arrive only in the `open` frame of the session that takes it.
import type { RunnerProcess } from "./runner-process.js";

export class SparePool {
  private readonly spares = new Set<RunnerProcess>();
  private closed = false;

  constructor(
    private readonly start: () => RunnerProcess,
    readonly size: number,
  ) {}

  /** A started, living spare for a session to open, or undefined when none is ready. */
  take(): RunnerProcess | undefined {
    for (const spare of this.spares) {
      this.spares.delete(spare);
      if (!spare.alive) continue;
      spare.hold(true);
      return spare;
    }
    return undefined;
  }

  /** Tops the pool up. Called after a session opened, so a harness nobody uses never costs a process. */
  fill(): void {
    while (!this.closed && this.spares.size < this.size) this.startOne();
  }

  /**
   * Starts one spare now, whatever the pool's size (a caller that knows a session is about to open); `started`:
   * one the caller already started, taken as this spare.
   */
  startOne(started?: RunnerProcess): void {
    if (this.closed) {
      void started?.destroy();
      return;
    }
    const spare = started ?? this.start();
    // An idle spare must not keep a one-shot Brain process alive; the session that takes it holds it again.
    spare.hold(false);
    this.spares.add(spare);
    // A spare that dies is only dropped: no session was using it, and the next one starts afresh.
    void spare.exited.then(() => this.spares.delete(spare));
  }

  /** The pids of the spares ready now (for tests and diagnostics). */
  pids(): number[] {
    return [...this.spares].flatMap((spare) => (spare.alive && spare.pid !== undefined ? [spare.pid] : []));
  }

  /** Kills every spare and its process group; none is started afterwards. */
  async close(): Promise<void> {
    this.closed = true;
    const spares = [...this.spares];
    this.spares.clear();
    // Nothing to save in a process that was never opened: no grace period.
    await Promise.all(spares.map((spare) => spare.destroy()));
  }
}
