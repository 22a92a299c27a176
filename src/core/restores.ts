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
import { CheckpointError, refuseInside } from "./checkpoints/index.js";
import { loggedCheckpoint, loggedCheckpoints } from "./conversation-chain.js";
import type { EventLog } from "./event-log.js";
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
  const restore = () => orNamingEarlier({ read }, id, logged, (cp) => checkpoints.restore(cp, dir));
  if (!keyed) return (await restore()).id;
  const mark = markPath(options.store, id, keyed.key);
  const into = path.resolve(dir);
  let restored = await restoredBefore(checkpoints, mark, { sent: keyed.sent, into });
  if (restored === undefined) {
    // A cluster node keeps a session's directory only once it has had reason to (its checkpoints pulled, say).
    await mkdir(path.dirname(mark), { recursive: true });
    await writeMark(mark, { sent: keyed.sent, checkpoint: logged, into, key: keyed.key });
    try {
      restored = (await restore()).id;
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

/**
 * A fork or restore of a checkpoint that cannot be used (its manifest or a blob it needs damaged, in NATS or in the
 * cache) fails naming it and the one the session's log records before it, by id: no route lists a session's
 * checkpoints, and a client that asked for "latest" knew of no other id to ask for. A failure of the caller's (a
 * directory that cannot be written), a full disk or NATS out of reach is not the checkpoint's, and goes as it was.
 */
export async function orNamingEarlier<T>(
  log: Pick<EventLog, "read">,
  session: string,
  checkpoint: string,
  use: (checkpoint: string) => Promise<T>,
): Promise<T> {
  try {
    return await use(checkpoint);
  } catch (err) {
    if (!(err instanceof CheckpointError) || err.code !== "brain_error") throw err;
    const { ids } = await loggedCheckpoints(log, checkpoint).catch(() => ({ ids: [] as string[] }));
    const earlier = ids.filter((id) => id !== checkpoint).at(-1);
    const other = err.message.includes("use another checkpoint")
      ? ""
      : "use another checkpoint of the session: ";
    const instead =
      earlier === undefined
        ? `${other}the log records none before it; checkpoint the session again and use the new one`
        : `${other}the one the log records before it is {"checkpoint":"${earlier}"}`;
    const named = err.message.includes(`checkpoint ${checkpoint} `)
      ? ""
      : `checkpoint ${checkpoint} of session ${session} cannot be used: `;
    throw new CheckpointError("brain_error", `${named}${err.message}; ${instead}`, err.path);
  }
}
