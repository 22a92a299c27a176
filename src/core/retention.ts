// Retention of closed sessions: their logs compacted once they have been idle for a while (a completed turn's
// deltas folded into its message; see src/store/fs/compact.ts), so a daemon that runs for weeks does not keep
// every streamed chunk of every finished conversation. The policy is the operator's (brain.config.json
// `retention`); the store does the rewriting, and the core makes sure no session is open while it happens.

/** What one compaction did. */
export interface CompactResult {
  eventsBefore: number;
  eventsAfter: number;
  bytesBefore: number;
  bytesAfter: number;
  /** Turns whose deltas were folded into their message. */
  turns: number;
}

/** A store that can compact a closed session's log. */
export interface CompactingStore {
  /**
   * Compacts the session's log when nothing was written to it for `idleMs` and it changed since it was last
   * compacted; undefined when it was skipped (recent, unchanged, or holding a request or turn still open).
   */
  compact(id: string, options: { idleMs: number }): Promise<CompactResult | undefined>;
}

export interface RetentionPolicy {
  /** Compact a closed session's log once it has been idle this long. */
  compactAfterMs: number;
}

/** Sweeps on a timer; the first sweep runs one period after start, not at start-up. */
export class RetentionSweeper {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(
    private readonly sweep: (idleMs: number) => Promise<unknown>,
    private readonly policy: RetentionPolicy,
    private readonly onError: (err: unknown) => void,
  ) {}

  /** How often to look: a quarter of the idle time, at least every second and at most every minute. */
  get periodMs(): number {
    return Math.min(60_000, Math.max(1_000, this.policy.compactAfterMs / 4));
  }

  start(): void {
    this.timer = setInterval(() => {
      this.running ??= this.sweep(this.policy.compactAfterMs)
        .then(() => {}, this.onError)
        .finally(() => {
          this.running = undefined;
        });
    }, this.periodMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }
}
