// Restores: a checkpoint's native files written into a directory of the daemon's machine. A restore writes nothing
// to the session's log, so a keyed one keeps its answer in the session's record (SessionRecord.restores): a retry
// under its key, on any node and after a restart, is answered from there (src/server/native-state.ts), where it
// would find the directory the first filled and be refused as not empty. A first attempt killed before it kept its
// answer left its mark (RestoreMark) and the whole checkpoint in the directory: its retry finds both and keeps the
// answer then.
import { mkdir, rm } from "node:fs/promises";
import path from "node:path";
import type { SessionEvent } from "../protocol/events.js";
import type { SessionRecord } from "../protocol/session.js";
import type { BrainOptions } from "./brain-options.js";
import { refuseInside } from "./checkpoints/index.js";
import { loggedCheckpoint } from "./conversation-chain.js";
import { checkpointsOf } from "./open-session.js";
import { type KeptRestore, keepRestore, markPath, restoredBefore, writeMark } from "./restore-marks.js";

export { type KeptRestore, RESTORES_KEPT } from "./restore-marks.js";

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
  const checkpoints = checkpointsOf(options, id);
  const logged = await loggedCheckpoint({ read }, checkpoint, id);
  if (!keyed) return (await checkpoints.restore(logged, dir)).id;
  const mark = markPath(options.store, id, keyed.key);
  const into = path.resolve(dir);
  let restored = await restoredBefore(checkpoints, mark, { sent: keyed.sent, into });
  if (restored === undefined) {
    // A cluster node keeps a session's directory only once it has had reason to (its checkpoints pulled, say).
    await mkdir(path.dirname(mark), { recursive: true });
    await writeMark(mark, { sent: keyed.sent, checkpoint: logged, into, key: keyed.key });
    try {
      restored = (await checkpoints.restore(logged, dir)).id;
    } catch (err) {
      await rm(mark, { force: true });
      throw err;
    }
  }
  // Before the answer: once the client has it, a retry under its key must find it, on any node.
  await keepRestore(options.store, id, { ...keyed, checkpoint: restored });
  await rm(mark, { force: true });
  return restored;
}
