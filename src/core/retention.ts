// Retention of closed sessions: their logs compacted once they have been idle for a while (a completed turn's
// deltas folded into its message; see src/store/fs/compact.ts), and their oldest segments archived or dropped by
// age or size (src/store/fs/retire.ts), so a daemon that runs for weeks does not keep every streamed chunk of
// every finished conversation. The policy is the operator's (brain.config.json
// `retention`); the store does the rewriting, and the core makes sure no session is open while it happens.

import type { SessionRecord } from "../protocol/session.js";
import { isParentOf } from "./conversation-chain.js";
import type { SessionSummary, UnreadableSession } from "./store.js";

/** What one compaction did. */
export interface CompactResult {
  eventsBefore: number;
  eventsAfter: number;
  bytesBefore: number;
  bytesAfter: number;
  /** Turns whose deltas were folded into their message. */
  turns: number;
}

/** Which of a log's oldest segments retention archives or drops (any subset; see src/store/fs/retire.ts). */
export interface SegmentPolicy {
  /** Sealed segments last written this long ago leave the log for its archive (gzip'd, kept on disk). */
  archiveAfterMs?: number;
  /** Sealed segments (and archived ones) last written this long ago are deleted. */
  dropAfterMs?: number;
  /** The oldest sealed segments leave the log (archived when archiving is set, else dropped) past this size. */
  maxBytes?: number;
}

/** What one pass of a segment policy did. */
export interface RetireResult {
  archived: number;
  dropped: number;
  bytesFreed: number;
  /** The first seq the log still holds after this pass. */
  firstSeq: number;
}

/** A store that can compact a closed session's log. */
export interface CompactingStore {
  /**
   * Compacts the session's log when nothing was written to it for `idleMs` and it changed since it was last
   * compacted; undefined when it was skipped (recent, unchanged, or holding a request or turn still open).
   */
  compact(id: string, options: { idleMs: number }): Promise<CompactResult | undefined>;
  /**
   * Archives or drops the oldest sealed segments of a session's log by `policy`; undefined when the log is open
   * somewhere (the next sweep looks again).
   */
  retire?(id: string, policy: SegmentPolicy): Promise<RetireResult | undefined>;
}

export interface RetentionPolicy extends SegmentPolicy {
  /** Compact a closed session's log once it has been idle this long. */
  compactAfterMs?: number;
}

/**
 * Compaction and segment retirement over the logs no session holds open here (`busy`), one at a time. While a
 * job runs for a session, opening it waits (`idle`) instead of racing the rewrite.
 */
export class ClosedLogs {
  private readonly working = new Map<string, Promise<void>>();
  /** Sessions no sweep may start on (being deleted), with how many callers hold each. */
  private readonly held = new Map<string, number>();
  /** The damaged records retireIdle has warned of (once each). */
  private readonly warned = new Set<string>();

  constructor(
    private readonly store: Partial<CompactingStore> & {
      list(unreadable?: (session: UnreadableSession) => void): Promise<SessionSummary[]>;
    },
    private readonly busy: (id: string) => boolean,
  ) {}

  /** Resolves once no compaction or retirement runs on `id`. */
  async idle(id: string): Promise<void> {
    for (let job = this.working.get(id); job; job = this.working.get(id)) await job;
  }

  /**
   * Runs `fn` with no compaction or retirement on `id` (they hold its log's lock, which a deletion must take):
   * waits for the one running, and no sweep starts one until `fn` ends.
   */
  async excluding<T>(id: string, fn: () => Promise<T>): Promise<T> {
    this.held.set(id, (this.held.get(id) ?? 0) + 1);
    try {
      await this.idle(id);
      return await fn();
    } finally {
      const left = (this.held.get(id) ?? 1) - 1;
      if (left > 0) this.held.set(id, left);
      else this.held.delete(id);
    }
  }

  /** Compacts logs idle for `idleMs`. */
  async compactIdle(idleMs: number): Promise<{ id: string; result: CompactResult }[]> {
    const store = this.store;
    if (!store.compact) return [];
    // A record that cannot be read is passed over (the session list names it): thrown, it would stop every sweep.
    const ids = (await store.list(() => {})).map((r) => r.id);
    return this.sweep(ids, (id) => store.compact!(id, { idleMs }));
  }

  /**
   * Archives or drops old segments; sessions forked or handed off from keep theirs. `warn` is told once of each
   * damaged record that may be a fork whose parent's segments go (its parent cannot be told).
   */
  async retireIdle(
    policy: SegmentPolicy,
    warn?: (message: string) => void,
  ): Promise<{ id: string; result: RetireResult }[]> {
    const store = this.store;
    if (!store.retire) return [];
    const damaged: UnreadableSession[] = [];
    const records = await store.list((session) => damaged.push(session));
    const pinned = pinnedSessions(records);
    // A record that cannot be read may be a fork of any session made before it, whose history it will read once
    // repaired: those keep their segments meanwhile. One that is not JSON at all is dated by its file's last
    // write: "made before it" would be nearly every session, held back without a word for as long as it stays
    // damaged. It holds back none, and the operator is told once.
    for (const d of damaged.filter((d) => d.undated && !this.warned.has(d.id))) {
      this.warned.add(d.id);
      warn?.(
        `retention: ${d.error}; until then, the segments of the session it may be a fork of are not kept`,
      );
    }
    const mayBeParent = (r: SessionSummary) => damaged.some((d) => !d.undated && isParentOf(r, d));
    return this.sweep(
      records.filter((r) => !pinned.has(r.id) && !mayBeParent(r)).map((r) => r.id),
      (id) => store.retire!(id, policy),
    );
  }

  private async sweep<R>(
    ids: readonly string[],
    fn: (id: string) => Promise<R | undefined>,
  ): Promise<{ id: string; result: R }[]> {
    const done: { id: string; result: R }[] = [];
    for (const id of ids) {
      if (this.busy(id) || this.working.has(id) || this.held.has(id)) continue;
      const job = fn(id).finally(() => this.working.delete(id));
      this.working.set(
        id,
        job.then(
          () => {},
          () => {},
        ),
      );
      const result = await job;
      if (result) done.push({ id, result });
    }
    return done;
  }
}

/**
 * Sessions whose log is part of another session's history (forked or handed off from): a fork's transcript and
 * checks read its parent's log up to the fork, so no segment of it may go. A session made after the one naming
 * its id (the parent deleted, its id given again) is not that one's parent, and keeps no segment for it.
 */
export function pinnedSessions(
  records: readonly Pick<SessionRecord, "id" | "created_at" | "forked_from" | "handoff_from">[],
): Set<string> {
  const byId = new Map(records.map((r) => [r.id, r]));
  const pinned = new Set<string>();
  for (const r of records) {
    const from = r.forked_from?.session ?? r.handoff_from?.session;
    const parent = from === undefined ? undefined : byId.get(from);
    if (parent && isParentOf(parent, r)) pinned.add(parent.id);
  }
  return pinned;
}

/** Whether a policy asks anything of segments. */
export const retiresSegments = (p: SegmentPolicy) =>
  p.archiveAfterMs !== undefined || p.dropAfterMs !== undefined || p.maxBytes !== undefined;

/** Sweeps on a timer; the first sweep runs one period after start, not at start-up. */
export class RetentionSweeper {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(
    private readonly sweep: (policy: RetentionPolicy) => Promise<unknown>,
    private readonly policy: RetentionPolicy,
    private readonly onError: (err: unknown) => void,
  ) {}

  /** How often to look: a quarter of the shortest age set, at least every second and at most every minute. */
  get periodMs(): number {
    const { compactAfterMs, archiveAfterMs, dropAfterMs } = this.policy;
    const ages = [compactAfterMs, archiveAfterMs, dropAfterMs].filter((ms) => ms !== undefined);
    return Math.min(60_000, Math.max(1_000, Math.min(...ages, 240_000) / 4));
  }

  start(): void {
    this.timer = setInterval(() => {
      this.running ??= this.sweep(this.policy)
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
