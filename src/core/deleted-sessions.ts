// What a store remembers of the sessions a tenant deleted under an Idempotency-Key: a tombstone per delete (the
// session's id and created_at, a digest of the key, when), so that a retry of a delete whose answer was lost gets
// the first answer (204) again, on any node and after a restart, where it would get a 404 it cannot tell from
// "never existed" or "someone else deleted it". Each tenant's tombstones are one list, kept by the store
// (src/store/fs as a file per tenant, src/store/nats as a key per tenant of its own bucket): looked up under the
// caller's tenant only, so another tenant's retry finds nothing and still gets a 404 that tells it nothing.
import { createHash } from "node:crypto";

/** One keyed delete. The key is kept as a digest: a client may have put a secret there by mistake. */
export interface Tombstone {
  id: string;
  key: string;
  deleted_at: string;
  /**
   * The created_at of the session deleted: a record of the id found later with another one is a session made again
   * since, which a retry must not delete. Compared as a value, not as a time: deleted_at is one node's clock and a
   * record's created_at may be another's, a skew that would pass a new session for the old one cut short.
   * Absent in tombstones written before it was kept.
   */
  made?: string;
}

export interface DeletedSessions {
  /** Records that `tenant` deleted `tombstone.id` under its key (the tenant's list is then pruned: `kept`). */
  add(tenant: string, tombstone: Tombstone): Promise<void>;
  /** `tenant`'s tombstones still kept (within the window), oldest first. */
  list(tenant: string): Promise<Tombstone[]>;
}

/**
 * How long a retry of a delete gets its first answer: a day, as other APIs keep an Idempotency-Key (a client
 * retries within seconds or minutes, or after an outage of hours). Later, a retry is a new request (a 404).
 */
export const TOMBSTONE_WINDOW_MS = 24 * 60 * 60 * 1000;

/**
 * How many tombstones a tenant keeps at most, the newest: the list is read and written whole on each keyed
 * delete, and at about 200 bytes a tombstone, 256 keep it near 50 KB (under NATS's default 1 MB message) whatever
 * a tenant deletes in a day. A retry has to come after 256 more keyed deletes of its tenant to be forgotten.
 */
export const TOMBSTONES_PER_TENANT = 256;

/** The digest a tombstone keeps of an Idempotency-Key. */
export const keyDigest = (key: string): string => createHash("sha256").update(key).digest("base64url");

/** The name a tenant's list goes by in a store (a file or KV key): any tenant name, in safe characters. */
export const tenantSlot = (tenant: string): string => createHash("sha256").update(tenant).digest("hex");

/**
 * `list` with `added` (if any) in place of an earlier tombstone of its session and key, less those past the window,
 * cut to the newest TOMBSTONES_PER_TENANT. A session keeps one tombstone per key, not one in all: two clients that
 * deleted it at once under their own keys both got 204, and each one's retry must find its own. Tombstones of
 * the same shape were written before, one per session, and read as they are. What a store reads that is not a
 * list of tombstones counts as empty: a damaged list only forgets deletes, which then answer 404 as before keys.
 */
export function kept(list: unknown, now: number, added?: Tombstone): Tombstone[] {
  const stones = (Array.isArray(list) ? list : []).filter(
    (t): t is Tombstone =>
      typeof t?.id === "string" &&
      typeof t?.key === "string" &&
      typeof t?.deleted_at === "string" &&
      (t.made === undefined || typeof t.made === "string") &&
      now - Date.parse(t.deleted_at) < TOMBSTONE_WINDOW_MS &&
      !(t.id === added?.id && t.key === added?.key),
  );
  if (added) stones.push(added);
  return stones.slice(-TOMBSTONES_PER_TENANT);
}
