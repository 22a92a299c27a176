// How many bytes one session may hold: its log and its checkpoints. Every prompt and steer goes into the log whole
// (up to 4 MiB each), and every checkpoint stores a manifest and what its native files gained since the last: one
// tenant's client could prompt or checkpoint a session until the disk was full, and then every tenant's appends on
// this host would fail. Past the bound the session takes no more of its clients' text and no more checkpoints (a
// 429 naming the bound and what to do); what it already holds stays, and a running turn still ends in the log. A
// session with no checkpoint may take one past its own bound, so that it can be forked (not past its tenant's: the
// fork would be the tenant's too). The bytes are the store's own count
// (the log's files or its messages in the cluster's stream; the checkpoints' manifests and blobs, ./checkpoint-bytes.ts;
// the record, its config again: the embedded store's session.json, the value in the cluster's records bucket), so
// a restart does not reset it.
// The daemon checks inside a command's idempotency check: a retried prompt already in the log is answered as it
// was, never refused for the size it added.
// A check and what it admits run one at a time per session, and per tenant once the tenant nears its bound: two
// checkpoints at once would otherwise both be checked before either was written, and both pass a bound that lets
// one. Far from its bound a tenant's sessions are checked at once: one at a time, each prompt would wait for the
// harness start of the tenant's prompt before it.

import type { SessionRecord } from "../protocol/session.js";
import { SessionError } from "./errors.js";
import { OneAtATime } from "./one-at-a-time.js";
import { REMEASURE_FROM, type TenantBytes } from "./tenant-bytes.js";

/** What a session holds in the store: its log's and its checkpoints' bytes together, and how many checkpoints. */
export interface HeldBytes {
  bytes: number;
  checkpoints: number;
  /** The session's tenant (undefined: the default tenant), whose sum the session's bytes are part of. */
  tenant?: string;
}

interface Over {
  held: HeldBytes;
  /** What is held past which bound. */
  said: string;
  /** How to go on. */
  way: string;
  /** The tenant's bound, not the session's own: a fork (the tenant's too) would not make room. */
  tenant?: boolean;
}

export class SessionLogBound {
  private readonly sessions = new OneAtATime();
  private readonly tenantsNear = new OneAtATime();

  /**
   * `held`: what the store holds of a session (undefined for a store that cannot tell). `max` absent: no bound on a
   * session. `tenants`: the bound on all of a tenant's sessions (./tenant-bytes.ts).
   */
  constructor(
    private readonly held: (id: string) => Promise<HeldBytes | undefined>,
    private readonly max?: number,
    private readonly tenants?: TenantBytes,
  ) {}

  /** Runs `grow` (which adds a client's text to session `id`'s log) once the session is under its bound, or refuses it. */
  admit<T>(id: string, grow: () => Promise<T>): Promise<T> {
    return this.atomic(id, grow, (over) => {
      throw new SessionError("limit_reached", `${over.said}: it takes no more prompts; ${over.way}`);
    });
  }

  /**
   * Runs `make` (a checkpoint of session `id`) unless the session is at its bound and has a checkpoint already, or
   * its tenant is at its own: a session with none may pass its own bound once, to be forked and go on in a new one,
   * but a fork is the same tenant's, and each fork's first checkpoint would store its native state again.
   */
  admitCheckpoint<T>(id: string, make: () => Promise<T>): Promise<T> {
    return this.atomic(id, make, (over) => {
      if (over.held.checkpoints > 0 || over.tenant) {
        throw new SessionError("limit_reached", `${over.said}: it takes no more checkpoints; ${over.way}`);
      }
    });
  }

  /** Checks session `id`, `refuse`s it if over (a refusal throws), and runs `grow`, with no other check between. */
  private atomic<T>(id: string, grow: () => Promise<T>, refuse: (over: Over) => void): Promise<T> {
    if (this.max === undefined && this.tenants?.max === undefined) return grow();
    return this.sessions.run(id, async () => {
      const checked = await this.check(id);
      if (!checked.near) {
        if (checked.over) refuse(checked.over);
        return this.measured(id, checked.held, grow);
      }
      // Near its bound the tenant's checks wait for each other; checked again, as one before may have grown it.
      return this.tenantsNear.run(checked.held?.tenant ?? "", async () => {
        const { over, held } = await this.check(id);
        if (over) refuse(over);
        return this.measured(id, held, grow);
      });
    });
  }

  /** Runs `grow`, then counts in the tenant's sum what it added, so that the next check of any session sees it. */
  private async measured<T>(id: string, held: HeldBytes | undefined, grow: () => Promise<T>): Promise<T> {
    try {
      return await grow();
    } finally {
      // Never fails what it counts: a store that cannot tell now is asked again at the next check.
      if (held) await this.tenants?.measure(held.tenant, id).catch(() => {});
    }
  }

  /**
   * Runs `make` (a new session of `tenant`) unless the tenant holds its bound, then counts what it stored: a new
   * session's first event holds its config (up to 4 MiB, its record as much again), which no prompt's check sees,
   * and a tenant past its bound made sessions without end. A tenant's new sessions are made one at a time, however
   * far from the bound (near it, with its other checks): checked at once, a burst of them all passed the check
   * before any was counted, each past a bound that let one. A create writes two small files, a fork or a handoff
   * also its native state (a checkpoint's files, or the conversation seeded), and none starts a harness.
   * `links`: a fork's or a handoff's, a new session of the same tenant that starts with a copy of its source's
   * config and state; the source is measured first, as it may have grown since. Past only the source's own bound a
   * copy is allowed: that is how a session at its bound goes on.
   */
  async admitNew<T extends { id: string }>(
    tenant: string | undefined,
    make: () => Promise<T>,
    links: Pick<SessionRecord, "forked_from" | "handoff_from"> = {},
  ): Promise<T> {
    const tenants = this.tenants;
    if (tenants?.max === undefined) return make();
    const max = tenants.max;
    return this.tenantsNear.run(tenant ?? "", async () => {
      const from = (links.forked_from ?? links.handoff_from)?.session;
      if (from !== undefined) await tenants.measure(tenant, from);
      const total = await tenants.total(tenant);
      if (total >= max) {
        const { said, way } = tenantOver(tenant, total, max);
        throw new SessionError("limit_reached", `${said}: it makes no more ${newKind(links)}; ${way}`);
      }
      const made = await make();
      await tenants.measure(tenant, made.id).catch(() => {});
      return made;
    });
  }

  /** `near`: the tenant's sum is within REMEASURE_FROM of its bound (./tenant-bytes.ts). */
  private async check(id: string): Promise<{ over?: Over; held?: HeldBytes; near?: boolean }> {
    const max = this.max;
    if (max === undefined && this.tenants?.max === undefined) return {};
    const held = await this.held(id);
    if (held === undefined) return {};
    if (max !== undefined && held.bytes >= max) {
      const said = `session ${id}'s log and ${held.checkpoints} checkpoints hold ${held.bytes} bytes on this host, its limit (${max})`;
      const raise = "raise limits.log_bytes_per_session in brain.config.json";
      const way =
        held.checkpoints > 0
          ? `go on from its latest checkpoint in a new session (POST /v1/sessions/${id}/fork) or write it out (POST /v1/sessions/${id}/restore), or ${raise} (checkpoints cannot be deleted through the API)`
          : `fork it or hand it off to go on in a new session, or ${raise}`;
      return { over: { held, said, way }, held };
    }
    return this.checkTenant(id, held);
  }

  private async checkTenant(
    id: string,
    held: HeldBytes,
  ): Promise<{ over?: Over; held: HeldBytes; near?: boolean }> {
    const tenants = this.tenants;
    if (!tenants?.max) return { held };
    const total = await tenants.update(held.tenant, id, held.bytes);
    const near = total >= tenants.max * REMEASURE_FROM;
    if (total < tenants.max) return { held, near };
    return { over: { held, ...tenantOver(held.tenant, total, tenants.max), tenant: true }, held, near };
  }
}

/** What a refused new session would have been. */
function newKind(links: Pick<SessionRecord, "forked_from" | "handoff_from">): string {
  return links.forked_from ? "forks" : links.handoff_from ? "handoffs" : "sessions";
}

/** What a tenant at its bound holds, and how to go on. */
function tenantOver(tenant: string | undefined, total: number, max: number): { said: string; way: string } {
  return {
    said: `tenant "${tenant ?? "default"}"'s sessions hold ${total} bytes on this host, its limit (${max})`,
    way: "delete sessions it no longer needs (DELETE /v1/sessions/{id}), or raise limits.log_bytes_per_tenant in brain.config.json",
  };
}
