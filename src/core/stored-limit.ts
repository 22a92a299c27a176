// How many sessions each tenant may keep stored. A session stays on disk (its record, log, native files and
// checkpoints) until a client deletes it, and a create costs a token holder nothing: without a bound one tenant
// could create sessions until the disk was full, and every tenant's listing would read each of their records.
//
// Counting every record at each create would cost a stat per stored session. The counts come from one listing
// and follow this process's creates and deletes; other processes on the same store (a `brain run`, another
// node) make them drift, so a tenant near its bound is counted again from the store before it is refused.

import { DEFAULT_TENANT } from "../protocol/session.js";
import { SessionError } from "./errors.js";
import type { SessionSummary, UnreadableSession } from "./store.js";

/** Counted again from the store once a tenant's count is within this share of the bound. */
const RECOUNT_FROM = 0.9;

export class StoredSessionLimit {
  private counts: Promise<Map<string, number>> | undefined;
  /** Creates under way, per tenant: a burst of creates cannot pass the bound together. */
  private readonly creating = new Map<string, number>();

  /** `max` absent: no bound. `list` is the store's, told of the records it cannot read. */
  constructor(
    private readonly list: (unreadable: (session: UnreadableSession) => void) => Promise<SessionSummary[]>,
    private readonly max?: number,
  ) {}

  /** Runs `create` once the tenant has room for one more stored session, or refuses it, naming the bound. */
  async admit<T>(tenant: string | undefined, create: () => Promise<T>): Promise<T> {
    const max = this.max;
    if (max === undefined) return create();
    const name = tenant ?? DEFAULT_TENANT;
    let held = await this.held(name);
    if (held >= max * RECOUNT_FROM) {
      this.counts = undefined;
      held = await this.held(name);
    }
    if (held >= max) {
      throw new SessionError(
        "limit_reached",
        `tenant "${name}" has ${held} sessions stored on this host, its limit: delete one it no longer needs (DELETE /v1/sessions/{id}) and try again, or raise limits.stored_sessions_per_tenant in brain.config.json`,
      );
    }
    this.creating.set(name, (this.creating.get(name) ?? 0) + 1);
    try {
      const made = await create();
      this.add(name, 1);
      return made;
    } finally {
      const left = (this.creating.get(name) ?? 1) - 1;
      if (left > 0) this.creating.set(name, left);
      else this.creating.delete(name);
    }
  }

  /** A session of `tenant` was deleted. */
  removed(tenant: string | undefined): void {
    if (this.max !== undefined) this.add(tenant ?? DEFAULT_TENANT, -1);
  }

  private async held(name: string): Promise<number> {
    const counts = await this.counted();
    return (counts.get(name) ?? 0) + (this.creating.get(name) ?? 0);
  }

  private counted(): Promise<Map<string, number>> {
    if (this.counts) return this.counts;
    // A record that cannot be read still takes its tenant's room when it names the tenant; thrown, it would fail
    // every tenant's creates, and counted for the default tenant, it could be anyone's.
    const damaged: UnreadableSession[] = [];
    const counting = this.list((session) => damaged.push(session)).then((records) => {
      const counts = new Map<string, number>();
      for (const record of [...records, ...damaged.filter((d) => d.tenant !== undefined)]) {
        const name = record.tenant ?? DEFAULT_TENANT;
        counts.set(name, (counts.get(name) ?? 0) + 1);
      }
      return counts;
    });
    this.counts = counting;
    // A listing that failed is tried again at the next create, not kept.
    counting.catch(() => {
      if (this.counts === counting) this.counts = undefined;
    });
    return counting;
  }

  private add(name: string, by: number): void {
    void this.counts?.then((counts) => counts.set(name, Math.max(0, (counts.get(name) ?? 0) + by)));
  }
}
