// Idempotency-Key on DELETE /v1/sessions/{id}. A deleted session has no record left to hold the key, so the
// store keeps a tombstone of the delete under the caller's tenant (src/core/deleted-sessions.ts), written after
// the session is found to be the caller's and before it goes. A retry under the same key finds it and gets the
// first answer (204) again, on any node and after a restart, where it would get a 404; so does one that comes
// after the session was made again under its id (a keyed create, the default tenant's chosen id): the retry is
// of the delete already made, and must not delete the new session. Another tenant's retry finds no tombstone
// under its own tenant and gets the 404 it got before, telling it nothing.
import type { Brain } from "../core/brain.js";
import { keyDigest } from "../core/deleted-sessions.js";
import { BrainError } from "../core/errors.js";

/** Whether a delete of session `id` under `key` by `tenant` was already made (a retry, to be answered 204). */
export async function deletedBefore(
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
export async function rememberDelete(
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
