// When a log's deferred appends (AppendOptions.deferred: a tool's result) are committed: with the next append that
// wants a commit, or alone once they have waited DEFER_MS. Not by a commit in flight as it ends either: a result
// is made as its call's commit is delivered (answered at once), and committed alone it would hold up the harness's
// next calls, sent as it reads the result, for a commit of their own.
import type { Batch } from "./log-batch.js";
import { DEFER_MS } from "./log-tuning.js";

export class DeferredWait {
  private timer: NodeJS.Timeout | undefined;

  /** `queue`: the log's batch now; `flush`: starts its commit (or queues it behind the one in flight). */
  constructor(
    private readonly queue: () => Batch,
    private readonly flush: () => void,
  ) {}

  /** Deferred appends may be queued and nothing else asks for a commit: they wait DEFER_MS at most. */
  start(): void {
    const queue = this.queue();
    if (queue.length > 0 && queue.due === 0) this.timer ??= setTimeout(this.over, DEFER_MS);
  }

  /** A commit takes them now. */
  cancel(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Their wait is over (or the log closes): they are committed, alone if need be. */
  readonly over = (): void => {
    this.timer = undefined;
    const queue = this.queue();
    if (queue.length === 0) return;
    queue.due++;
    this.flush();
  };
}
