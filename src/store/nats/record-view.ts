// The summaries of the cluster store's session records kept in memory, fed by a watch of the records bucket, so
// listing thousands of sessions costs one request (the bucket's last revision), not a KV read and a schema check
// each. Summaries, not records: a record's config may be megabytes, and a tenant may keep thousands of sessions.
//
// Why a watch and a revision check rather than "our own writes keep it fresh": every node writes the bucket, and
// a list must see what any node wrote before it began, as the full read did. The watch delivers every node's
// writes in revision order; a list asks the bucket for its last revision and answers once the view has applied
// it. A view that cannot get there (its watch ended, failed, or stopped delivering) is never answered from:
// the caller reads the bucket in full instead, and the view starts a new watch. Nor is the watch trusted to deliver
// every revision (nats-server 2.9.10 was seen to skip one): a revision it skips is read from the bucket by
// sequence before the next is applied (./record-gaps.ts), and the bucket's last ones, which no next one shows
// skipped, are read so once the watch goes quiet while a list waits for them.
//
// Why kept by tenant: one tenant's list must cost what its own sessions cost, not what every tenant's do. The view
// groups the summaries by tenant and a tenant's list sorts and copies only its group; the full read, which cannot
// tell a record's tenant from its key (the key layout is every node's, old and new), still reads every record but
// checks and keeps only the tenant's.
import type { KV, KvEntry, KvWatchEntry } from "@nats-io/kv";
import { OneAtATime } from "../../core/one-at-a-time.js";
import { listedTenant, type SessionSummary, type UnreadableSession } from "../../core/store.js";
import { oldestFirst, SESSION_ID } from "../fs/session-record.js";
import { errorMessage } from "./errors.js";
import { MAX_GAP_READS } from "./record-gaps.js";
import { type Damaged, type Slot, slotOf, tell } from "./record-slot.js";

/** A watch quiet this long while a list waits for it may have skipped the bucket's last revisions (ms). */
const QUIET_MS = 250;

/** What the view reads of what kv.watch() gives (its whole type lives in @nats-io/nats-core, not ours). */
type WatchIterator = AsyncIterable<KvWatchEntry> & { stop(): void };

export interface RecordViewOptions {
  /** Starts a watch of the records bucket (`kv.watch()`): every key's last value first, then every change. */
  watch(): Promise<WatchIterator>;
  /** Reads one revision of the bucket (undefined when it is gone): one the watch skipped (./record-gaps.ts). */
  revision(seq: number): Promise<KvEntry | undefined>;
  /** The bucket's last revision now and how many values it holds (deleted ones too, as their markers). */
  bucket(): Promise<BucketState>;
  /** How long a list waits for the view to catch up before it reads the bucket in full instead (ms). */
  catchUpMs: number;
  /** How long a watch delivers nothing while behind before a list reads the revisions it lacks (ms; 250). */
  quietMs?: number;
  /** One line when lists stop being answered from the view (and why). */
  warn(message: string): void;
  /** Told of each record a list looks at (tests count that one tenant's list looks at none of another's). */
  looked?: (id: string) => void;
}

export interface BucketState {
  lastRevision: number;
  values: number;
  /** Values kept a key (the bucket's history; 1 as the store makes it, an operator may change it). */
  history: number;
}

/** Whose a slot is: its record's tenant, or the one a damaged record names (the default tenant's when none). */
const slotTenant = (slot: Slot) => listedTenant("error" in slot ? slot.unreadable : slot.summary);

interface Sorted {
  summaries: SessionSummary[];
  damaged: Damaged[];
}

/** One watch and the records it delivered; a new one replaces it when it ends or stops delivering. */
class Watch {
  readonly slots = new Map<string, Slot>();
  /** Every key applied, deleted ones too (the bucket keeps their markers): what a count of its values tells. */
  private readonly keys = new Set<string>();
  /** The same slots by tenant: a tenant's list looks at its own only. */
  private readonly tenants = new Map<string, Map<string, Slot>>();
  /** The last revision applied: once loaded, the view holds every write up to it. */
  revision = 0;
  /** The watch's first values (each key's last) are all in: until then, a high revision does not tell. */
  loaded = false;
  /** The bucket's last revision before the watch began: the first values cover it, whatever is left of it. */
  floor = 0;
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
        const tenant = slotTenant(slot);
        const group = this.tenants.get(tenant) ?? new Map<string, Slot>();
        this.tenants.set(tenant, group.set(entry.key, slot));
        this.sorted.delete(tenant);
      } else this.slots.delete(entry.key);
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
   * Why the view is wrong at the bucket's `state`, when a count tells. At the bucket's last revision, a bucket of
   * history 1 holds one value a key (a deleted key's is its marker): fewer keys here mean the watch skipped a key's
   * value unseen, as it can among its first values (each key's last: their revisions are not consecutive, so no
   * gap shows). More keys are an operator's purge of delete markers: nothing missed.
   */
  miscounted({ lastRevision, values, history }: BucketState): string | undefined {
    if (history !== 1 || this.revision !== lastRevision || this.keys.size >= values) return undefined;
    return `it skipped a value unseen: it holds ${this.keys.size} keys at revision ${lastRevision}, the bucket ${values}`;
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
    return this.loaded && this.revision >= revision;
  }

  private wake(): void {
    for (const waiter of [...this.waiters]) waiter();
  }
}

export class RecordView {
  private watch: Watch | undefined;
  private closed = false;
  /** Lists are being answered by full reads: said once, until the view answers again. */
  private degraded = false;

  constructor(private readonly options: RecordViewOptions) {}

  /**
   * Every session record's summary (only `tenant`'s, given one) as of now (every write acknowledged before the call), oldest first; undefined when the
   * view cannot tell (the caller reads the bucket in full). Throws what is wrong with a bad record, as the full
   * read does, and a failure to ask for the bucket's last revision.
   */
  async list(
    unreadable?: (session: UnreadableSession) => void,
    tenant?: string,
  ): Promise<SessionSummary[] | undefined> {
    if (this.closed) return undefined;
    const watch = this.watch ?? this.start();
    const before = watch.revision;
    const state = await this.options.bucket();
    const target = state.lastRevision;
    const caughtUp = await this.catchUp(watch, target);
    const miscounted = caughtUp ? watch.miscounted(state) : undefined;
    if (caughtUp && miscounted === undefined) {
      this.degraded = false;
      return watch.records(unreadable, tenant, this.options.looked);
    }
    // Ended, failed or miscounted: start again. Stuck (nothing new in all that time): its delivery stopped, start
    // again. Still loading (a large bucket, a slow link): let it go on; this list reads in full meanwhile.
    const why =
      miscounted ??
      watch.ended ??
      (watch.revision === before
        ? `it delivered nothing for ${this.options.catchUpMs} ms while behind the bucket (revision ${watch.revision} of ${target})`
        : undefined);
    if (why !== undefined && watch === this.watch) this.restart();
    if (!this.degraded) {
      this.degraded = true;
      this.options.warn(
        `cluster store: listing sessions by reading every record: the watch of the records bucket ${why ? `failed (${why}); watching again` : `is still loading (revision ${watch.revision} of ${target})`}`,
      );
    }
    return undefined;
  }

  /**
   * Waits up to the catch-up time for the view to apply `target`. A skipped revision shows as a gap only once a
   * later one is delivered: when the skipped ones are the bucket's last, nothing shows it until the next write;
   * when the last of the first values is skipped, the watch never says they are in. So a watch that delivers
   * nothing for quietMs while behind has the revisions it lacks read by sequence, rather than have the list wait
   * out the catch-up, read every record and watch again.
   */
  private async catchUp(watch: Watch, target: number): Promise<boolean> {
    const deadline = Date.now() + this.options.catchUpMs;
    for (;;) {
      const seen = watch.revision;
      if (await watch.reach(target, Math.min(deadline - Date.now(), this.options.quietMs ?? QUIET_MS)))
        return true;
      if (watch.ended !== undefined || Date.now() >= deadline) return false;
      if (watch.revision === seen) await this.readTail(watch);
    }
  }

  /**
   * Applies the revisions after the view's last up to the bucket's last, read by sequence, if the bucket held
   * still meanwhile. A revision read as gone was replaced by a later write of its key: that one is among those
   * read, unless it came after the bucket's last was asked for, and then the bucket did not hold still (the watch
   * delivers it, or the next quiet spell reads it).
   */
  private readTail(watch: Watch): Promise<void> {
    return watch.turn(async () => {
      const { lastRevision: last } = await this.options.bucket();
      const from = watch.revision + 1;
      // So far behind, the watch is slow rather than skipping: the catch-up decides.
      if (last < from || last - from + 1 > MAX_GAP_READS) return;
      const read: KvEntry[] = [];
      for (let seq = from; seq <= last; seq++) {
        const entry = await this.options.revision(seq);
        if (entry) read.push(entry);
      }
      if (watch.stopped || (await this.options.bucket()).lastRevision !== last) return;
      for (const entry of read) watch.apply(entry);
      watch.heldUpTo(last);
    });
  }

  /** Stops the watch; lists answer undefined from now on. */
  close(): void {
    this.closed = true;
    this.watch?.stop();
    this.watch = undefined;
  }

  private restart(): void {
    this.watch?.stop();
    this.watch = undefined;
    this.start();
  }

  private start(): Watch {
    const watch = new Watch();
    this.watch = watch;
    void this.run(watch);
    return watch;
  }

  private async run(watch: Watch): Promise<void> {
    try {
      const before = await this.options.bucket();
      watch.floor = before.lastRevision;
      const iterator = await this.options.watch();
      watch.iterator = iterator;
      // Closed or replaced while the watch was being set up.
      if (watch.stopped) return iterator.stop();
      // An empty bucket has no first values to wait for: none will say the last of them is in.
      if (before.values === 0) watch.load();
      for await (const entry of iterator) {
        const applied = await watch.turn(async () => {
          const skipped = watch.skipped(entry.revision);
          if (skipped && !(await this.fill(watch, skipped))) return false;
          // Read already (in a gap or a skipped tail), delivered late after all: applied again, it would undo what
          // came after it.
          if (entry.revision > watch.revision) watch.apply(entry);
          // kv.watch() marks the last of the first values (and all after) as updates.
          if (entry.isUpdate) watch.load();
          return true;
        });
        if (!applied) return iterator.stop();
      }
      watch.end("the watch ended");
    } catch (err) {
      watch.end(`the watch failed: ${errorMessage(err)}`);
    }
  }

  /**
   * Applies the revisions the watch skipped, in order, before the entry that showed the gap: those the bucket
   * still holds (a later write of a key, or a purge, removes the ones it replaced, leaving nothing to apply). The
   * watch's next entries wait meanwhile, so none is applied out of order. False when the watch is over: too many
   * to read (it ends, and the next list watches again), or it was stopped meanwhile.
   */
  private async fill(watch: Watch, { from, to }: { from: number; to: number }): Promise<boolean> {
    if (to - from + 1 > MAX_GAP_READS) {
      watch.end(`it skipped revisions ${from} to ${to} of the bucket`);
      return false;
    }
    for (let seq = from; seq <= to; seq++) {
      const missed = await this.options.revision(seq);
      if (watch.stopped) return false;
      if (missed) watch.apply(missed);
    }
    return true;
  }
}

/** What a list compares the view with: the records bucket's last revision and value count, in one request. */
export async function bucketState(records: KV): Promise<BucketState> {
  const { state, config } = (await records.status()).streamInfo;
  return { lastRevision: state.last_seq, values: state.messages, history: config.max_msgs_per_subject };
}
