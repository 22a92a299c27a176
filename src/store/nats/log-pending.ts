// The appends a NATS log holds in memory until JetStream acknowledges them (or they fail): their bytes, for a
// harness's reader to pause on (core/backlog.ts), so a slow or unreachable stream slows the agent instead of
// growing Brain's heap, as a slow disk does for the embedded log (store/fs/log-pending.ts).
import type { PendingWrites } from "../../core/event-log.js";
import type { NewEvent, SessionEvent } from "../../protocol/events.js";

/** One append waiting for its commit. */
export interface QueuedAppend {
  events: SessionEvent[];
  /** About how many bytes its events take: what it adds to the pending count until it is settled. */
  bytes: number;
  resolve(events: SessionEvent[]): void;
  reject(err: Error): void;
}

/**
 * `events` as the log stores them, seq and ts left for the commit to give, with their size: the JSON of each
 * one's data, which must serialize anyway (a JSON error is thrown here, before anything is queued).
 */
export function toStored(events: NewEvent[], session: string): { events: SessionEvent[]; bytes: number } {
  const stored: SessionEvent[] = [];
  let bytes = 0;
  for (const e of events) {
    bytes += (JSON.stringify(e.data)?.length ?? 0) + e.type.length;
    const s = { seq: 0, ts: "", session, type: e.type, data: e.data };
    if (e.turn !== undefined) (s as SessionEvent).turn = e.turn;
    stored.push(s as SessionEvent);
  }
  return { events: stored, bytes };
}

export class PendingAppends implements PendingWrites {
  private count = 0;
  private readonly listeners = new Set<() => void>();

  get bytes(): number {
    return this.count;
  }

  /** An append is queued. */
  add(append: QueuedAppend): void {
    this.count += append.bytes;
  }

  /** A commit ended: `appends` are stored or failed, each settled once, and the listeners are told. */
  settled(appends: readonly QueuedAppend[]): void {
    for (const append of appends) this.count -= append.bytes;
    for (const listener of [...this.listeners]) listener();
  }

  onCommitted(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
