// One owner per session log in cluster mode: a key per session in the owners KV bucket, whose max_age is the
// lease's TTL. `create` claims it (refused while another node's lease lives), `update` by revision renews it
// every third of the TTL, and a node that cannot renew before the TTL runs out stops writing and lets go. The
// stream's expected-sequence check is the second fence: a paused owner's late append is refused even if its
// own clock has not noticed yet.
import type { KV } from "@nats-io/kv";
import { errorMessage, fenced, NatsStoreError, storedUnanswered } from "./errors.js";
import { createOn } from "./kv-update.js";

export interface LeaseHolder {
  /** The node's id, as other nodes see it (its name, or its URL for routing). */
  node: string;
}

export class Lease {
  private renewedAt: number;
  private timer: NodeJS.Timeout | undefined;
  private lostWith: NatsStoreError | undefined;
  private released = false;
  private paused = false;
  /** The renewal in flight, if any: release waits for it, or would delete at a revision it just replaced. */
  private renewing: Promise<unknown> | undefined;
  /**
   * Renewals sent at `revision` whose answer never came (value → when it was sent): one of them may be stored,
   * and the key then holds this node's value at a revision it was never told.
   */
  private unanswered = new Map<string, number>();
  private readonly lostListeners = new Set<(err: NatsStoreError) => void>();

  private constructor(
    private readonly bucket: KV,
    readonly session: string,
    readonly holder: LeaseHolder,
    private revision: number,
    readonly ttlMs: number,
    startedAt: number,
  ) {
    this.renewedAt = startedAt;
    this.schedule();
  }

  /** Claims the session for `holder`; refused (code `locked`, naming the owner) while another holds it. */
  static async claim(bucket: KV, session: string, holder: LeaseHolder, ttlMs: number): Promise<Lease> {
    const startedAt = monotonicNow();
    const value = JSON.stringify({ node: holder.node, since: new Date().toISOString() });
    try {
      const revision = await createOn(bucket, session, value);
      return new Lease(bucket, session, holder, revision, ttlMs, startedAt);
    } catch (err) {
      // A claim stored without its answer (a timeout through a leader election): the key holds this very value.
      const stored = await storedUnanswered(bucket, session, value);
      if (stored) return new Lease(bucket, session, holder, stored.revision, ttlMs, startedAt);
      const owner = await Lease.owner(bucket, session).catch(() => undefined);
      if (owner !== undefined || /wrong last sequence/i.test(errorMessage(err))) {
        throw new NatsStoreError(
          "locked",
          `session ${session} is owned by node ${owner ?? "(unknown)"}; send its commands there, or wait for its lease to expire (${ttlMs} ms without renewal)`,
          { session },
        );
      }
      throw new NatsStoreError(
        "brain_error",
        `session ${session}: cannot claim its lease: ${errorMessage(err)}`,
        {
          cause: err,
        },
      );
    }
  }

  /** The node holding the session's lease now, if any. */
  static async owner(bucket: KV, session: string): Promise<string | undefined> {
    const entry = await bucket.get(session);
    if (entry?.operation !== "PUT") return undefined;
    try {
      return (JSON.parse(entry.string()) as { node?: string }).node;
    } catch {
      return undefined;
    }
  }

  get lost(): NatsStoreError | undefined {
    return this.lostWith;
  }

  /** Throws (code `locked`) unless the lease is surely still this node's: renewed less than a TTL ago. */
  check(): void {
    const since = monotonicNow() - this.renewedAt;
    if (!this.lostWith && since >= this.ttlMs) {
      this.lose(`its lease was last renewed ${Math.round(since)} ms ago, past its ${this.ttlMs} ms TTL`);
    }
    if (this.lostWith) throw this.lostWith;
    if (this.released) throw new NatsStoreError("brain_error", `session ${this.session}: lease released`);
  }

  /** Calls `listener` once if the lease is lost (the host stops the session's harness). */
  onLost(listener: (err: NatsStoreError) => void): () => void {
    if (this.lostWith) {
      listener(this.lostWith);
      return () => {};
    }
    this.lostListeners.add(listener);
    return () => this.lostListeners.delete(listener);
  }

  /**
   * Test seam standing in for SIGSTOP: renewals stop (true) or go on (false) while the process runs, so a
   * test can let the lease expire under a node that still believes it writes.
   */
  pauseRenewals(paused: boolean): void {
    this.paused = paused;
    if (!paused) this.schedule();
  }

  /** Stops renewing and deletes the key if it is still this lease's revision. */
  async release(): Promise<void> {
    if (this.released) return;
    this.released = true;
    clearTimeout(this.timer);
    await this.renewing;
    if (this.lostWith) return;
    const remove = () => this.bucket.delete(this.session, { previousSeq: this.revision });
    // A renewal stored without its answer moved the revision: delete at that one, or the key stays a whole TTL.
    await remove().catch(async () => {
      if (await this.foundOwnRenewal()) await remove().catch(() => {});
    });
  }

  private schedule(): void {
    clearTimeout(this.timer);
    if (this.released || this.lostWith || this.paused) return;
    this.timer = setTimeout(() => void this.renew(), Math.max(1, Math.floor(this.ttlMs / 3)));
    // Renewal must not keep a process alive that has nothing else to do.
    this.timer.unref();
  }

  private async renew(): Promise<void> {
    if (this.released || this.lostWith || this.paused) return;
    // A late timer (a paused process) must not renew a lease that has already run out: another may own it.
    if (monotonicNow() - this.renewedAt >= this.ttlMs) {
      this.lose(`it could not renew its lease within the ${this.ttlMs} ms TTL`);
      return;
    }
    const sentAt = monotonicNow();
    const value = JSON.stringify({ node: this.holder.node, renewed: new Date().toISOString() });
    try {
      const update = this.bucket.update(this.session, value, this.revision).then((revision) => {
        this.revision = revision;
        this.renewedAt = sentAt;
        this.unanswered.clear();
      });
      this.renewing = update.catch(() => {});
      await update;
    } catch (err) {
      if (/wrong last sequence/i.test(errorMessage(err))) {
        if (!(await this.foundOwnRenewal())) {
          this.lose("its lease was taken by another node");
          return;
        }
        // Renewed then, at a revision now known: renew from it at once rather than a third of a TTL later.
        return this.renew();
      } else {
        // NATS unreachable, or the answer lost: keep trying until the TTL runs out (check() refuses writes then).
        this.unanswered.set(value, sentAt);
      }
    }
    this.schedule();
  }

  /**
   * After a renewal refused for a revision that moved on: true when the key holds a renewal of this node's that
   * was stored though its answer was lost, taken as renewed then (at its revision). Any other value is another
   * node's claim, and a key that cannot be read is not taken for this node's.
   */
  private async foundOwnRenewal(): Promise<boolean> {
    const entry = await this.bucket.get(this.session).catch(() => null);
    const sentAt = entry?.operation === "PUT" ? this.unanswered.get(entry.string()) : undefined;
    if (!entry || sentAt === undefined) return false;
    this.revision = entry.revision;
    this.renewedAt = sentAt;
    this.unanswered.clear();
    return true;
  }

  private lose(why: string): void {
    if (this.lostWith) return;
    this.lostWith = fenced(this.session, why);
    clearTimeout(this.timer);
    for (const listener of [...this.lostListeners]) listener(this.lostWith);
    this.lostListeners.clear();
  }
}

/**
 * The clock a lease is timed by (ms): monotonic, as the server's expiry is. The wall clock can be stepped back
 * (NTP, an operator), and a lease timed by it would seem fresh long after the server let it go to another node.
 */
function monotonicNow(): number {
  return performance.now();
}
