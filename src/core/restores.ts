// Restores: a checkpoint's native files written into a directory of the daemon's machine. A restore writes nothing
// to the session's log, so a keyed one keeps its answer in the session's record (SessionRecord.restores): a retry
// under its key, on any node and after a restart, is answered from there (src/server/native-state.ts), where it
// would find the directory the first filled and be refused as not empty. A first attempt killed before it kept its
// answer left its mark (RestoreMark) and the whole checkpoint in the directory: its retry finds both and keeps the
// answer then.
import { createHash } from "node:crypto";
import { mkdir, readFile, rm } from "node:fs/promises";
import path from "node:path";
import type { SessionEvent } from "../protocol/events.js";
import type { SessionRecord } from "../protocol/session.js";
import type { BrainOptions } from "./brain-options.js";
import { type Checkpoints, holdsManifest, refuseInside } from "./checkpoints/index.js";
import { writeFileDurable } from "./checkpoints/io.js";
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
  const checkpoints = checkpointsOf(options, id);
  const logged = await loggedCheckpoint({ read }, checkpoint, id);
  if (!keyed) return (await checkpoints.restore(logged, dir)).id;
  const mark = markPath(options.store, id, keyed.key);
  const into = path.resolve(dir);
  let restored = await restoredBefore(checkpoints, mark, { sent: keyed.sent, into });
  if (restored === undefined) {
    const marked: RestoreMark = { sent: keyed.sent, checkpoint: logged, into };
    // A cluster node keeps a session's directory only once it has had reason to (its checkpoints pulled, say).
    await mkdir(path.dirname(mark), { recursive: true });
    await writeFileDurable(mark, `${JSON.stringify(marked)}\n`);
    try {
      restored = (await checkpoints.restore(logged, dir)).id;
    } catch (err) {
      await rm(mark, { force: true });
      throw err;
    }
  }
  // Before the answer: once the client has it, a retry under its key must find it, on any node.
  await keep(options.store, id, { ...keyed, checkpoint: restored });
  await rm(mark, { force: true });
  return restored;
}

/**
 * What a keyed restore notes before it writes anything, in the session's directory on this machine (where its
 * target is): the target alone cannot say whose files it holds (only the checkpoint's), and the record is read by
 * every node (an older one refuses a restore entry with a field it does not know). Removed once the record keeps
 * the answer; one left behind names a restore killed before that.
 */
interface RestoreMark {
  sent: string;
  checkpoint: string;
  into: string;
}

const markPath = (store: SessionStore, id: string, key: string) =>
  path.join(
    path.dirname(store.paths(id).native),
    `restoring-${createHash("sha256").update(key).digest("base64url")}.json`,
  );

/**
 * The checkpoint a first attempt under the key wrote into `into` when it was killed before keeping its answer:
 * its mark is there, for the same body, and the target holds that checkpoint's files exactly (a restore renames
 * them into place at once). Anything else in the target (written since, or before) leaves it refused as not empty.
 */
async function restoredBefore(
  checkpoints: Checkpoints,
  mark: string,
  { sent, into }: Omit<RestoreMark, "checkpoint">,
): Promise<string | undefined> {
  const text = await readFile(mark, "utf8").catch(() => undefined);
  let marked: Partial<RestoreMark> | undefined;
  try {
    marked = text === undefined ? undefined : JSON.parse(text);
  } catch {
    return undefined; // not a mark of this code's: nothing to recognise
  }
  if (marked?.sent !== sent || marked.into !== into || typeof marked.checkpoint !== "string")
    return undefined;
  const manifest = await checkpoints.get(marked.checkpoint).catch(() => undefined);
  return manifest && (await holdsManifest(manifest, into)) ? manifest.id : undefined;
}

/** Adds `restore` to the record's list, built on the list as the update finds it: restores at once all land. */
async function keep(store: SessionStore, id: string, restore: KeptRestore): Promise<void> {
  await store.update(id, (current) => {
    const kept = (current.restores ?? []).filter((earlier) => earlier.key !== restore.key);
    return { restores: [...kept, restore].slice(-RESTORES_KEPT) };
  });
}
