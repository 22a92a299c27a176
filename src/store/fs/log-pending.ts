// The bytes a log holds in memory until they are durable: its queue and the batches being written. A harness's
// reader pauses on them (core/backlog.ts), so a slow disk slows the agent instead of growing Brain's heap.
import type { PendingWrites } from "../../core/event-log.js";
import type { Batch } from "./log-batch.js";

export class PendingBytes implements PendingWrites {
  /** The sizes of the batches taken for a commit and not done yet (two at most: see JsonlEventLog.followOn). */
  private writing = 0;
  private readonly taken = new Map<Batch, number>();
  private readonly listeners = new Set<() => void>();

  constructor(private readonly queued: () => number) {}

  get bytes(): number {
    return this.queued() + this.writing;
  }

  /** `batch` leaves the queue to be written: its bytes count until `done`. */
  take(batch: Batch): Batch {
    const size = batch.size;
    this.taken.set(batch, size);
    this.writing += size;
    return batch;
  }

  /**
   * `batch` is durable or failed (none: the queue failed), and the listeners are told. Once per batch: a batch
   * whose failure is seen twice is counted off once.
   */
  done(batch?: Batch): void {
    const size = batch === undefined ? undefined : this.taken.get(batch);
    if (size !== undefined) {
      this.taken.delete(batch!);
      this.writing -= size;
    }
    for (const listener of this.listeners) listener();
  }

  onCommitted(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
