// Idempotency-Key on DELETE /v1/sessions/{id}. A deleted session has no record left to hold the key, so the
// store keeps a tombstone of the delete under the caller's tenant (src/core/deleted-sessions.ts), written after
// the session is found to be the caller's and before it goes. A retry under the same key finds it and gets the
// first answer (204) again, on any node and after a restart, where it would get a 404; so does one that comes
// after the session was made again under its id (a keyed create, the default tenant's chosen id): the retry is
// of the delete already made, and must not delete the new session. Another tenant's retry finds no tombstone
// under its own tenant and gets the 404 it got before, telling it nothing.
import type { Brain } from "../core/brain.js";
import { keyDigest } from "../core/deleted-sessions.js";
import { dependedOn, dependentsOf } from "../core/dependents.js";
import { BrainError } from "../core/errors.js";
import type { OneAtATime } from "../core/one-at-a-time.js";
import { ApiError } from "./errors.js";
import { awaitFirst, KEYED_WAIT_MS } from "./idempotency.js";
import { deletable } from "./session-list.js";

/**
 * Deletes run once per key. Two requests with one key at once (a client retrying before the first answered) are
 * one delete: on one node the second shares the first's run; on another node (or once the first's tombstone is
 * written) it finds the session gone, and a 404 from a delete whose tombstone holds its key is the 204 of the
 * delete it repeats, not "no such session".
 */
export class KeyedDeletes {
  /** Keyed deletes running on this node, by tenant, session and key. */
  private readonly running = new Map<string, Promise<void>>();

  /**
   * `sources`: work on a session others are made from, by its id, one at a time: a delete (its check of the
   * dependents and its removal) and each fork or handoff of the session (SessionService), so that none is made
   * between the check and the removal to find its parent gone. `waitMs`: how long a retry waits for the first
   * delete under its key (./idempotency.ts, awaitFirst).
   */
  constructor(
    private readonly brain: Brain,
    private readonly sources: OneAtATime,
    private readonly waitMs = KEYED_WAIT_MS,
  ) {}

  /**
   * Deletes session `id` of `tenant` with `remove` once it is found to be the tenant's, unless `key` did. Unless
   * `force`, a session others were forked or handed off from is refused (./dependents.ts).
   */
  async run(
    tenant: string,
    id: string,
    key: string | undefined,
    remove: () => Promise<void>,
    force = false,
  ): Promise<void> {
    const once = () => this.once(tenant, id, key, remove, force);
    if (key === undefined) return once();
    const slot = `${tenant}\u0000${id}\u0000${key}`;
    const same = this.running.get(slot);
    if (same) return awaitFirst(same, key, `delete of session ${id}`, this.waitMs);
    const run = once().catch(async (err: unknown) => {
      const gone = (err instanceof ApiError || err instanceof BrainError) && err.code === "not_found";
      if (gone && (await deletedBefore(this.brain, tenant, id, key))) return;
      throw err;
    });
    this.running.set(slot, run);
    try {
      return await run;
    } finally {
      if (this.running.get(slot) === run) this.running.delete(slot);
    }
  }

  private async once(
    tenant: string,
    id: string,
    key: string | undefined,
    remove: () => Promise<void>,
    force: boolean,
  ) {
    // A retry of a delete already made (a forced one too, whatever was made from the session since) is answered as
    // the first (204) without waiting for a fork or handoff of the session.
    if (await deletedBefore(this.brain, tenant, id, key)) return;
    return this.sources.run(id, () => this.checkedRemove(tenant, id, key, remove, force));
  }

  private async checkedRemove(
    tenant: string,
    id: string,
    key: string | undefined,
    remove: () => Promise<void>,
    force: boolean,
  ) {
    await deletable(this.brain, tenant, id);
    // Marked before the check, for a fork or handoff made meanwhile on another node (core/deleting-marks.ts).
    const mark = await this.brain.deleting.mark(id);
    try {
      if (!force) {
        const dependents = await dependentsOf(this.brain, id, tenant);
        const forcedDelete = `DELETE /v1/sessions/${id}?force=true`;
        if (dependents.length > 0) throw new ApiError("conflict", dependedOn(id, dependents, forcedDelete));
      }
      await rememberDelete(this.brain, tenant, id, key);
      await remove();
    } catch (err) {
      await this.brain.deleting.clear(id, mark);
      throw err;
    }
  }
}

/** Whether a delete of session `id` under `key` by `tenant` was already made (a retry, to be answered 204). */
async function deletedBefore(
  brain: Brain,
  tenant: string,
  id: string,
  key: string | undefined,
): Promise<boolean> {
  if (key === undefined || !brain.deletes) return false;
  const digest = keyDigest(key);
  const stone = (await brain.deletes.list(tenant)).find((t) => t.id === id && t.key === digest);
  if (!stone) return false;
  const record = await brain.record(id).catch((err: unknown) => {
    if (err instanceof BrainError && err.code === "not_found") return undefined;
    return null; // damaged: whether it came after the delete cannot be told, and a delete removes it (as before)
  });
  if (record === null) return false;
  if (record === undefined) return true;
  // Still there: the session deleted (the delete was cut short after writing the tombstone: make it again), or one
  // made again under the id since, told apart by its created_at (see Tombstone.made). An older tombstone has only
  // its time to go by.
  if (stone.made !== undefined) return record.created_at !== stone.made;
  return Date.parse(record.created_at) > Date.parse(stone.deleted_at);
}

/** Keeps the tombstone of `tenant`'s delete of session `id` under `key` (none without a key). */
async function rememberDelete(
  brain: Brain,
  tenant: string,
  id: string,
  key: string | undefined,
): Promise<void> {
  if (key === undefined || !brain.deletes) return;
  // A damaged record has no created_at to keep: its tombstone goes by time, as an older one does.
  const made = (await brain.record(id).catch(() => undefined))?.created_at;
  const deleted_at = new Date().toISOString();
  await brain.deletes.add(tenant, { id, key: keyDigest(key), deleted_at, ...(made ? { made } : {}) });
}
