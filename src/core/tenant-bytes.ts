// How many bytes all of one tenant's sessions may hold on this host (limits.log_bytes_per_tenant): without it a
// tenant could hold log_bytes_per_session × stored_sessions_per_tenant (10 TiB by default), and fill the disk every
// tenant's appends need. Checked where a session's own bound is (./log-bound.ts), against a sum kept here: summing
// every session's bytes at each prompt would cost a look at each of the tenant's sessions per prompt.
//
// A tenant's sum is measured from the store once (its sessions' logs and checkpoints), the first time one of its
// sessions is checked in this process; then each check measures only the session checked, before and after what
// it admits, and a session is measured again when it closes here (what its last turns wrote) and leaves the sum
// when deleted here. So the sum lags by what turns still running wrote since their prompt, and, in a cluster or
// with a `brain run` on the same home, by what other processes wrote since this one measured their sessions: a
// tenant whose sum nears its bound is measured again from the store (as ./stored-limit.ts counts again), at most
// once per REMEASURE_EVERY_MS.

import { DEFAULT_TENANT } from "../protocol/session.js";
import type { SessionSummary } from "./store.js";

/** Sessions measured at once when a tenant's sum is taken. */
const MEASURED_AT_ONCE = 16;
/** A tenant's sum is measured again from the store once it is within this share of the bound. */
export const REMEASURE_FROM = 0.9;
/**
 * At most this often (ms) per tenant: a measure reads each of the tenant's sessions (its log's size and any
 * checkpoints made since), and a tenant at its bound, whose every request is checked, would otherwise make each
 * request cost that. Five seconds bounds a client's requests to one measure each that long, and still counts what
 * other processes wrote within seconds of the tenant nearing its bound.
 */
const REMEASURE_EVERY_MS = 5_000;

interface Sum {
  sessions: Map<string, number>;
  total: number;
  /** When its measure began (Date.now()), or the last measure again was started from it. */
  at: number;
}

export class TenantBytes {
  private readonly sums = new Map<string, Promise<Sum>>();

  /**
   * `held`: what the store holds of one session (undefined for a store that cannot tell). `max` absent: no bound.
   * `remeasureMs`: how often a tenant near its bound may be measured again (tests shorten it).
   */
  constructor(
    /** The stored sessions of one tenant (SessionStore.list given it: no other tenant's are read). */
    private readonly list: (tenant: string) => Promise<SessionSummary[]>,
    private readonly held: (id: string) => Promise<number | undefined>,
    readonly max?: number,
    private readonly remeasureMs = REMEASURE_EVERY_MS,
  ) {}

  /** Session `id` of `tenant` holds `bytes` now: the tenant's sum with it, once the tenant's sum is known. */
  async update(tenant: string | undefined, id: string, bytes: number): Promise<number> {
    const sum = await this.current(tenant, (sum) => sum.total - (sum.sessions.get(id) ?? 0) + bytes);
    sum.total += bytes - (sum.sessions.get(id) ?? 0);
    sum.sessions.set(id, bytes);
    return sum.total;
  }

  /** The tenant's sum as it is, before a new session of it is made. */
  async total(tenant: string | undefined): Promise<number> {
    return (await this.current(tenant, (sum) => sum.total)).total;
  }

  /** Session `id` changed (it closed, or it took what it was admitted for): measured again if its tenant is summed. */
  async measure(tenant: string | undefined, id: string): Promise<void> {
    const sum = this.sums.get(tenant ?? DEFAULT_TENANT);
    if (!sum || this.max === undefined) return;
    const bytes = await this.held(id);
    if (bytes !== undefined) await this.update(tenant, id, bytes);
  }

  /** Session `id` of `tenant` was deleted. */
  removed(tenant: string | undefined, id: string): void {
    void this.sums.get(tenant ?? DEFAULT_TENANT)?.then((sum) => {
      sum.total -= sum.sessions.get(id) ?? 0;
      sum.sessions.delete(id);
    });
  }

  /** The tenant's sum, measured again from the store once it would be near the bound at `grown` (at most so often). */
  private async current(tenant: string | undefined, grown: (sum: Sum) => number): Promise<Sum> {
    const name = tenant ?? DEFAULT_TENANT;
    const taken = this.sums.has(name); // else the sum is being taken now, from the store
    const sum = await this.sumOf(name);
    const near = this.max !== undefined && grown(sum) >= this.max * REMEASURE_FROM;
    return taken && near && Date.now() - sum.at >= this.remeasureMs ? this.remeasure(name, sum) : sum;
  }

  private sumOf(name: string): Promise<Sum> {
    let sum = this.sums.get(name);
    if (!sum) {
      sum = this.measureAll(name);
      this.sums.set(name, sum);
      // A failed measure (the store unreachable) is taken again by the next check.
      sum.catch(() => this.sums.delete(name));
    }
    return sum;
  }

  /** The tenant's sum measured again from the store; checks meanwhile go on with `stale`, as does a failed one. */
  private async remeasure(name: string, stale: Sum): Promise<Sum> {
    stale.at = Date.now(); // before any await: checks at once start one measure, not one each
    const fresh = this.measureAll(name);
    this.sums.set(name, fresh);
    try {
      return await fresh;
    } catch {
      if (this.sums.get(name) === fresh) this.sums.set(name, Promise.resolve(stale));
      return stale;
    }
  }

  private async measureAll(name: string): Promise<Sum> {
    const at = Date.now();
    const ids = (await this.list(name)).map((s) => s.id);
    const sum: Sum = { sessions: new Map(), total: 0, at };
    for (let i = 0; i < ids.length; i += MEASURED_AT_ONCE) {
      const batch = ids.slice(i, i + MEASURED_AT_ONCE);
      const sizes = await Promise.all(batch.map((id) => this.held(id).catch(() => undefined)));
      batch.forEach((id, j) => {
        const bytes = sizes[j];
        if (bytes === undefined) return;
        sum.sessions.set(id, bytes);
        sum.total += bytes;
      });
    }
    return sum;
  }
}
