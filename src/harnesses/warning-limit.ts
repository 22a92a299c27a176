// Warnings a harness logs about what its agent process wrote: one per bad line would let a buggy process flood
// the session's log, so each run logs a few different ones and counts the rest.

/** Different warnings logged per run (or between runs); the rest are counted. */
const WARNINGS_PER_RUN = 20;

/**
 * A harness's warnings as the log gets them: a buggy host or runner can cause one per line it writes, so only the first few
 * different ones are logged, and repeats and the rest are counted until flush() says how many.
 */
export class WarningLimit {
  private readonly logged = new Set<string>();
  private held = 0;

  constructor(
    private readonly emit: (message: string) => void,
    private readonly limit = WARNINGS_PER_RUN,
  ) {}

  warn(message: string): void {
    if (this.logged.has(message) || this.logged.size >= this.limit) {
      this.held++;
      return;
    }
    this.logged.add(message);
    this.emit(message);
  }

  /** Logs how many were held back, and starts afresh (at the end of each run). */
  flush(who: string): void {
    if (this.held > 0)
      this.emit(
        `${who}: ${this.held} more warning${this.held === 1 ? "" : "s"} like the ones above, not logged`,
      );
    this.logged.clear();
    this.held = 0;
  }
}
