// What one tenant may hold of a daemon resource at once (answers on their way, bodies being read): past the
// bound its next request is refused with 429, and other tenants are not affected.
import { ApiError } from "./errors.js";

export class TenantBound {
  private readonly held = new Map<string, number>();

  /** `refusal`: the 429's message, naming the bound and what to do. */
  constructor(
    private readonly max: number,
    private readonly refusal: (tenant: string, held: number) => string,
  ) {}

  /** Takes one of `tenant`'s places, or refuses; the returned function gives it back (once, however often called). */
  take(tenant: string): () => void {
    const held = this.held.get(tenant) ?? 0;
    if (held >= this.max) throw new ApiError("limit_reached", this.refusal(tenant, held));
    this.held.set(tenant, held + 1);
    let given = false;
    return () => {
      if (given) return;
      given = true;
      const left = (this.held.get(tenant) ?? 1) - 1;
      if (left > 0) this.held.set(tenant, left);
      else this.held.delete(tenant);
    };
  }

  /** Runs `read` in one of `tenant`'s places. */
  async within<T>(tenant: string, read: () => Promise<T>): Promise<T> {
    const release = this.take(tenant);
    try {
      return await read();
    } finally {
      release();
    }
  }
}

/**
 * Request bodies one tenant may be sending at once. Each is held as it arrives (up to MAX_BODY_BYTES, 8 MiB)
 * until it is whole: clients that sent most of one and stopped made the daemon hold it for as long as the
 * connection stayed, however many of them one tenant opened.
 */
export const BODIES_PER_TENANT = 16;

/**
 * Commands one tenant may have waiting on another node at once (cluster mode). A frozen owner keeps its lease for
 * up to a TTL and a keyed command keeps trying it that long: each wait holds a socket and the command's body.
 */
export const FORWARDS_PER_TENANT = 64;

export function forwardWaits(maxPerTenant = FORWARDS_PER_TENANT): TenantBound {
  return new TenantBound(
    maxPerTenant,
    (tenant, held) =>
      `tenant "${tenant}" has ${held} commands waiting on the sessions' owners (other nodes) at once, its limit: send the next once one is answered, or raise limits.forwards_per_tenant in brain.config.json`,
  );
}

export function bodyReads(maxPerTenant = BODIES_PER_TENANT): TenantBound {
  return new TenantBound(
    maxPerTenant,
    (tenant, held) =>
      `tenant "${tenant}" is sending ${held} request bodies at once, its limit: send the next once one has arrived whole`,
  );
}
