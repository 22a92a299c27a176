// How many bytes all of one tenant's sessions may hold on this host (limits.log_bytes_per_tenant): without it a
// tenant could hold log_bytes_per_session × stored_sessions_per_tenant (10 TiB by default), and fill the disk every
// tenant's appends need. Checked where a session's own bound is (./log-bound.ts), against a sum kept here: summing
// every session's bytes at each prompt would cost a look at each of the tenant's sessions per prompt.
//
// A tenant's sum is measured from the store once (its sessions' logs and checkpoints), the first time one of its
// sessions is checked in this process; then each check measures only the session checked, before and after what
// it admits, and a session is measured again when it closes here (what its last turns wrote) and leaves the sum
// when deleted here. So the sum lags by what turns still running wrote since their prompt, and, in a cluster or
// with a `brain run` on the same home, by what other processes wrote since this one measured their sessions.

import type { SessionSummary } from "./store.js";

const DEFAULT_TENANT = "default";
/** Sessions measured at once when a tenant's sum is first taken. */
const MEASURED_AT_ONCE = 16;

interface Sum {
  sessions: Map<string, number>;
  total: number;
}

export class TenantBytes {
  private readonly sums = new Map<string, Promise<Sum>>();

  /** `held`: what the store holds of one session (undefined for a store that cannot tell). `max` absent: no bound. */
  constructor(
    private readonly list: () => Promise<SessionSummary[]>,
    private readonly held: (id: string) => Promise<number | undefined>,
    readonly max?: number,
  ) {}

  /** Session `id` of `tenant` holds `bytes` now: the tenant's sum with it, once the tenant's sum is known. */
  async update(tenant: string | undefined, id: string, bytes: number): Promise<number> {
    const sum = await this.sumOf(tenant ?? DEFAULT_TENANT);
    sum.total += bytes - (sum.sessions.get(id) ?? 0);
    sum.sessions.set(id, bytes);
    return sum.total;
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

  private async measureAll(name: string): Promise<Sum> {
    const ids = (await this.list()).filter((s) => (s.tenant ?? DEFAULT_TENANT) === name).map((s) => s.id);
    const sum: Sum = { sessions: new Map(), total: 0 };
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
