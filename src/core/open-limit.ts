// How many sessions each tenant may hold open in one process. An open session keeps its harness (a runner, a
// CLI agent, an API conversation) for as long as it is open, and nothing closes it but a client: without a bound,
// one tenant holding a valid token could open sessions until the host ran out of processes or memory, and every
// other tenant's next session would fail with it.

import { DEFAULT_TENANT } from "../protocol/session.js";
import { SessionError } from "./errors.js";
import type { LiveSessions } from "./live-sessions.js";

export class OpenSessionLimit {
  /** Opens under way, per tenant: counted before they are live, so a burst of opens cannot pass the bound together. */
  private readonly opening = new Map<string, number>();

  /** `max` absent: no bound. */
  constructor(
    private readonly live: LiveSessions,
    private readonly max?: number,
  ) {}

  /** Opens session `id` if it is not open or opening yet, as admit does; `tenantOf` reads its tenant. */
  async reopen<T>(
    id: string,
    tenantOf: () => Promise<string | undefined>,
    open: () => Promise<T>,
  ): Promise<T> {
    if (this.max === undefined || this.live.busy(id)) return open();
    const tenant = await tenantOf();
    // Asked again: another call may have begun opening it while the tenant was read.
    return this.live.busy(id) ? open() : this.admit(tenant, open);
  }

  /** Runs `open` once the tenant has room for one more open session, or refuses it, naming the bound. */
  async admit<T>(tenant: string | undefined, open: () => Promise<T>): Promise<T> {
    if (this.max === undefined) return open();
    const name = tenant ?? DEFAULT_TENANT;
    const held = this.live.list().filter((s) => (s.tenant ?? DEFAULT_TENANT) === name).length;
    const opening = this.opening.get(name) ?? 0;
    if (held + opening >= this.max) {
      throw new SessionError(
        "limit_reached",
        `tenant "${name}" has ${held + opening} sessions open on this host, its limit: close one it is done with (POST /v1/sessions/{id}/close) and try again, or raise limits.open_sessions_per_tenant in brain.config.json`,
      );
    }
    this.opening.set(name, opening + 1);
    try {
      return await open();
    } finally {
      const left = (this.opening.get(name) ?? 1) - 1;
      if (left > 0) this.opening.set(name, left);
      else this.opening.delete(name);
    }
  }
}
