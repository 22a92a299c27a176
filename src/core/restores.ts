// Restores: a checkpoint's native files written into a directory of the daemon's machine. A restore writes nothing
// to the session's log, so a keyed one keeps its answer in the session's record (SessionRecord.restores): a retry
// under its key, on any node and after a restart, is answered from there (src/server/native-state.ts), where it
// would find the directory the first filled and be refused as not empty.
import type { SessionEvent } from "../protocol/events.js";
import type { SessionRecord } from "../protocol/session.js";
import type { BrainOptions } from "./brain-options.js";
import { refuseInside } from "./checkpoints/index.js";
import { loggedCheckpoint } from "./conversation-chain.js";
import { checkpointsOf } from "./open-session.js";
import type { SessionStore } from "./store.js";

/**
 * The keyed restores a record keeps, the newest: a client retries within minutes of a lost answer, and a record
 * (read whole by every view and list) must not grow with every restore ever made.
 */
export const RESTORES_KEPT = 32;

/** A keyed restore's answer as its record keeps it: the key, a digest of the body, the checkpoint it wrote. */
export type KeptRestore = NonNullable<SessionRecord["restores"]>[number];
/** What a keyed restore is kept under: its key and a digest of its body. */
export type RestoreKey = Omit<KeptRestore, "checkpoint">;

/** The answer of the keyed restore of session `record` under `key`, if its record keeps it. */
export const restoredUnder = (record: SessionRecord, key: string): KeptRestore | undefined =>
  record.restores?.find((kept) => kept.key === key);

/** Writes `checkpoint` of session `id` into `dir`; returns its id, kept in the record under `keyed` when given. */
export async function restoreInto(
  options: BrainOptions,
  id: string,
  { checkpoint, dir, keyed }: { checkpoint: string; dir: string; keyed?: RestoreKey | undefined },
  read: (after: number, limit?: number) => Promise<SessionEvent[]>,
): Promise<string> {
  const home = options.store.home;
  if (home !== undefined) await refuseInside(dir, home, "$BRAIN_HOME");
  const manifest = await checkpointsOf(options, id).restore(
    await loggedCheckpoint({ read }, checkpoint, id),
    dir,
  );
  // Before the answer: once the client has it, a retry under its key must find it, on any node.
  if (keyed) await keep(options.store, id, { ...keyed, checkpoint: manifest.id });
  return manifest.id;
}

/** Adds `restore` to the record's list, built on the list as the update finds it: restores at once all land. */
async function keep(store: SessionStore, id: string, restore: KeptRestore): Promise<void> {
  await store.update(id, (current) => {
    const kept = (current.restores ?? []).filter((earlier) => earlier.key !== restore.key);
    return { restores: [...kept, restore].slice(-RESTORES_KEPT) };
  });
}
