// What the open logs of one cluster node keep of their recent events in memory, between them. Each log's tail
// is bounded (event-log.ts), but a node has many logs open (a tenant alone may hold hundreds), and at up to
// 16 MiB a log, one tenant's large prompts could make a node hold gigabytes. Past the node's budget the largest
// tails are let go: their reads go to NATS, as reads before a tail always do.

import type { SessionEvent } from "../../protocol/events.js";

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

/**
 * Recent events kept in memory, so watchers catching up on the owner read no NATS: this many, and no more bytes
 * than TAIL_BYTES (events may be up to MAX_MESSAGE each: by count alone large prompts could make it gigabytes).
 */
const TAIL_EVENTS = 4096;
const TAIL_BYTES = 8 * 1024 * 1024;

/** One log's recent events, with the JSON size of each, and their sum. */
export class EventTail {
  events: SessionEvent[] = [];
  private sizes: number[] = [];
  bytes = 0;

  /** Keeps `events` (of JSON sizes `sizes`); trimmed to TAIL_EVENTS and TAIL_BYTES once twice past them. */
  push(events: SessionEvent[], sizes: number[]): void {
    this.events.push(...events);
    this.sizes.push(...sizes);
    for (const size of sizes) this.bytes += size;
    if (this.events.length > TAIL_EVENTS * 2 || this.bytes > TAIL_BYTES * 2) this.trim();
  }

  clear(): void {
    this.events = [];
    this.sizes = [];
    this.bytes = 0;
  }

  /** Keeps the last TAIL_EVENTS events that fit in TAIL_BYTES (a read before them goes to NATS). */
  private trim(): void {
    let from = this.events.length;
    let bytes = 0;
    while (
      from > 0 &&
      this.events.length - from < TAIL_EVENTS &&
      bytes + this.sizes[from - 1]! <= TAIL_BYTES
    ) {
      bytes += this.sizes[--from]!;
    }
    this.events = this.events.slice(from);
    this.sizes = this.sizes.slice(from);
    this.bytes = bytes;
  }
}
