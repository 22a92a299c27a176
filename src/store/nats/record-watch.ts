// One watch of the records bucket and the session summaries it delivered, for the record view (./record-view.ts),
// which starts a new one when it ends or stops delivering; kept apart from the view to keep each file short.
import type { KvEntry, KvWatchEntry } from "@nats-io/kv";
import { OneAtATime } from "../../core/one-at-a-time.js";
import { listedTenant, type SessionSummary, type UnreadableSession } from "../../core/store.js";
import { oldestFirst, SESSION_ID } from "../fs/session-record.js";
import { type Damaged, type Slot, slotOf, tell } from "./record-slot.js";

/** What the view reads of what kv.watch() gives (its whole type lives in @nats-io/nats-core, not ours). */
export type WatchIterator = AsyncIterable<KvWatchEntry> & { stop(): void };

export interface BucketState {
  lastRevision: number;
  values: number;
  /**
   * Keys it holds a value of (a deleted key by its marker), whatever its history: the store makes the bucket with
   * one value a key, but keeps an existing bucket's (an operator's, or one edited since), so values do not count keys.
   */
  keys: number;
}

/** Whose a slot is: its record's tenant, or the one a damaged record names (the default tenant's when none). */
const slotTenant = (slot: Slot) => listedTenant("error" in slot ? slot.unreadable : slot.summary);

interface Sorted {
  summaries: SessionSummary[];
  damaged: Damaged[];
}

/** One watch and the records it delivered; a new one replaces it when it ends or stops delivering. */
export class Watch {
  readonly slots = new Map<string, Slot>();
  /** Each record's bytes as stored (its value's length), for the tenant byte bound: the record holds its config. */
  readonly sizes = new Map<string, number>();
  /** Every key applied, deleted ones too (the bucket keeps their markers): what the bucket's count of keys tells. */
  private readonly keys = new Set<string>();
  /** The same slots by tenant: a tenant's list looks at its own only. */
  private readonly tenants = new Map<string, Map<string, Slot>>();
  /** The last revision applied: once loaded, the view holds every write up to it. */
  revision = 0;
  /** The watch's first values (each key's last) are all in: until then, a high revision does not tell. */
  loaded = false;
  /** The bucket's last revision before the watch began: the first values cover it, whatever is left of it. */
  floor = 0;
  /**
   * No list is answered before the view applies this revision: a skipped one read as gone was replaced by a later
   * write of its key at or before it, and until that write is in, the view shows the key's value from before.
   */
  settledAt = 0;
  /** Why the watch ended (undefined while it runs). */
  ended: string | undefined;
  iterator: WatchIterator | undefined;
  /** Stopped by the view itself (closed, or replaced): its end is no failure. */
  stopped = false;
  /** Each tenant's slots in list order (under undefined: all of them), until one of them changes. */
  private readonly sorted = new Map<string | undefined, Sorted>();
  private readonly waiters = new Set<() => void>();
  /** The watch's entries and a list's read of a skipped tail, one at a time: no revision is applied out of order. */
  private readonly turns = new OneAtATime();

  turn<T>(work: () => Promise<T>): Promise<T> {
    return this.turns.run("watch", work);
  }

  /**
   * The revisions before `revision` this watch has not applied and should have: none among its first values (each
   * key's last as of `floor`; older ones are left out on purpose), every one after them (the watch is of every key).
   */
  skipped(revision: number): { from: number; to: number } | undefined {
    const from = Math.max(this.revision, this.floor) + 1;
    return revision > from ? { from, to: revision - 1 } : undefined;
  }

  apply(entry: KvEntry): void {
    this.keys.add(entry.key);
    if (SESSION_ID.test(entry.key)) {
      const before = this.slots.get(entry.key);
      // An id deleted may be made again by another tenant: the old slot leaves its tenant's group whatever comes.
      if (before) this.ungroup(entry.key, before);
      if (entry.operation === "PUT") {
        const slot = slotOf(entry);
        this.slots.set(entry.key, slot);
        this.sizes.set(entry.key, entry.length);
        const tenant = slotTenant(slot);
        const group = this.tenants.get(tenant) ?? new Map<string, Slot>();
        this.tenants.set(tenant, group.set(entry.key, slot));
        this.sorted.delete(tenant);
      } else {
        this.slots.delete(entry.key);
        this.sizes.delete(entry.key);
      }
      this.sorted.delete(undefined);
    }
    this.revision = Math.max(this.revision, entry.revision);
    this.wake();
  }

  /**
   * The first values are in. They are every key's last value as of the watch's start, which is after `floor` was
   * read: so the view holds every write up to `floor` even when the last of them is gone from the bucket (an
   * operator's purge of delete markers), which a wait for that revision to arrive would never see.
   */
  load(): void {
    this.loaded = true;
    this.revision = Math.max(this.revision, this.floor);
    this.wake();
  }

  /**
   * Every write up to `revision` is applied: those the watch delivered, then every value after them read from the
   * bucket. The first values come in revision order, so any not delivered yet were among those read: they are in.
   */
  heldUpTo(revision: number): void {
    this.loaded = true;
    this.revision = Math.max(this.revision, revision);
    this.wake();
  }

  /**
   * Why the view is wrong at the bucket's `state`, when a count tells. At the bucket's last revision, the view
   * holds every key the bucket holds a value of (a deleted key's is its marker), whatever the bucket's history:
   * fewer keys here mean the watch skipped a key's value unseen, as it can among its first values (each key's last:
   * their revisions are not consecutive, so no gap shows). More keys are an operator's purge: nothing missed.
   */
  miscounted({ lastRevision, keys }: BucketState): string | undefined {
    if (this.revision !== lastRevision || this.keys.size >= keys) return undefined;
    return `it skipped a value unseen: it holds ${this.keys.size} keys at revision ${lastRevision}, the bucket ${keys}`;
  }

  end(why: string): void {
    this.ended ??= why;
    this.wake();
  }

  stop(): void {
    this.stopped = true;
    this.iterator?.stop();
    this.end("stopped");
  }

  /**
   * Every record's summary (only `tenant`'s, given one), oldest first; a bad one is told to `unreadable`, or thrown
   * without it. `looked` is told of each.
   */
  records(
    unreadable?: (session: UnreadableSession) => void,
    tenant?: string,
    looked?: (id: string) => void,
  ): SessionSummary[] {
    let sorted = this.sorted.get(tenant);
    if (!sorted) {
      const summaries: SessionSummary[] = [];
      const damaged: Damaged[] = [];
      const slots = tenant === undefined ? this.slots : (this.tenants.get(tenant) ?? new Map<string, Slot>());
      for (const slot of slots.values()) {
        if ("error" in slot) damaged.push(slot);
        else summaries.push(slot.summary);
      }
      sorted = { summaries: summaries.sort(oldestFirst), damaged };
      this.sorted.set(tenant, sorted);
    }
    for (const slot of sorted.damaged) {
      looked?.(slot.unreadable.id);
      tell(slot, unreadable);
    }
    if (looked) for (const summary of sorted.summaries) looked(summary.id);
    // A copy: callers may sort or reverse what they get.
    return [...sorted.summaries];
  }

  private ungroup(id: string, slot: Slot): void {
    const tenant = slotTenant(slot);
    const group = this.tenants.get(tenant);
    group?.delete(id);
    if (group?.size === 0) this.tenants.delete(tenant);
    this.sorted.delete(tenant);
  }

  /** Resolves once the view has applied `revision`, or it ends, or `ms` pass: true only in the first case. */
  async reach(revision: number, ms: number): Promise<boolean> {
    const deadline = Date.now() + ms;
    while (!this.reached(revision) && this.ended === undefined) {
      const left = deadline - Date.now();
      if (left <= 0) return false;
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          this.waiters.delete(done);
          resolve();
        };
        const timer = setTimeout(done, left);
        this.waiters.add(done);
      });
    }
    return this.reached(revision);
  }

  private reached(revision: number): boolean {
    return this.loaded && this.revision >= Math.max(revision, this.settledAt);
  }

  private wake(): void {
    for (const waiter of [...this.waiters]) waiter();
  }
}
