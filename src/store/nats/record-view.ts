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
import type { KV, KvEntry } from "@nats-io/kv";
import type { SessionSummary, UnreadableSession } from "../../core/store.js";
import { errorMessage } from "./errors.js";
import { MAX_GAP_READS } from "./record-gaps.js";
import { type BucketState, Watch, type WatchIterator } from "./record-watch.js";

/** A watch quiet this long while a list waits for it may have skipped the bucket's last revisions (ms). */
const QUIET_MS = 250;

export interface RecordViewOptions {
  /** Starts a watch of the records bucket (`kv.watch()`): every key's last value first, then every change. */
  watch(): Promise<WatchIterator>;
  /** Reads one revision of the bucket (undefined when it is gone): one the watch skipped (./record-gaps.ts). */
  revision(seq: number): Promise<KvEntry | undefined>;
  /** The bucket's last revision now, how many values it holds and of how many keys (deleted ones by their markers). */
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

  /**
   * The bytes of session `id`'s record as the view last saw it; undefined when it has not (not watching yet, or a
   * record made so lately that its write is not in yet: the caller reads it). As fresh as the watch, not checked
   * against the bucket as a list is: a record's later writes change it by a few fields, never its config.
   */
  recordBytes(id: string): number | undefined {
    return this.closed ? undefined : this.watch?.sizes.get(id);
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
    let gone = false;
    for (let seq = from; seq <= to; seq++) {
      const missed = await this.options.revision(seq);
      if (watch.stopped) return false;
      if (missed) watch.apply(missed);
      else gone = true;
    }
    // The rule readTail keeps by checking the bucket held still: a revision read as gone was replaced by a write
    // at or before the bucket's last revision asked after the read. That write may come after the entry that
    // showed the gap and after a list asked for its target: until the view applies it, it shows the key's value
    // from before the gone one, so no list is answered before then (the watch delivers it, or a quiet spell reads it).
    if (gone) watch.settledAt = Math.max(watch.settledAt, (await this.options.bucket()).lastRevision);
    return true;
  }
}

/** What a list compares the view with: the records bucket's last revision and value and key counts, in one request. */
export async function bucketState(records: KV): Promise<BucketState> {
  const { state } = (await records.status()).streamInfo;
  // The stream's count of subjects, one a key: left out when 0. A server that never tells it counts 0, and a view
  // is then never judged by its count (nats-server 2.9.10, the cluster's, tells it).
  return { lastRevision: state.last_seq, values: state.messages, keys: state.num_subjects ?? 0 };
}
