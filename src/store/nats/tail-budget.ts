// What the open logs of one cluster node keep of their recent events in memory, between them. Each log's tail
// is bounded (event-log.ts), but a node has many logs open (a tenant alone may hold hundreds), and at up to
// 16 MiB a log, one tenant's large prompts could make a node hold gigabytes. Past the node's budget the largest
// tails are let go: their reads go to NATS, as reads before a tail always do.

/** A log whose tail the budget may let go. */
export interface TailHolder {
  /** Empties the tail (and tells the budget it holds nothing). */
  dropTail(): void;
}

/** How many bytes of tails a node keeps by default. */
export const DEFAULT_TAIL_BUDGET = 256 * 1024 * 1024;

export class TailBudget {
  private readonly held = new Map<TailHolder, number>();
  private total = 0;

  constructor(readonly maxBytes = DEFAULT_TAIL_BUDGET) {}

  /** The bytes every tail holds now, together. */
  get bytes(): number {
    return this.total;
  }

  /** `holder` keeps `bytes` now. Past the budget, the largest tails (its own last) are let go until it fits. */
  set(holder: TailHolder, bytes: number): void {
    this.total += bytes - (this.held.get(holder) ?? 0);
    if (bytes > 0) this.held.set(holder, bytes);
    else this.held.delete(holder);
    if (this.total <= this.maxBytes) return;
    const largest = [...this.held].filter(([other]) => other !== holder).sort((x, y) => y[1] - x[1]);
    for (const [other] of largest) {
      other.dropTail();
      if (this.total <= this.maxBytes) return;
    }
    holder.dropTail();
  }
}
