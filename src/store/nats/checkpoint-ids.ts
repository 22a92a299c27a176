// The ids of a session's checkpoints in cluster mode, kept beside its record in the records bucket and extended
// only by compare-and-set. A node reserves its checkpoint's id there before it writes the checkpoint's manifest,
// and only the node that reserved an id writes that manifest: each node numbers checkpoints from its own cache,
// and a stale owner's write landing late (held up past its lease) replaced the manifest its successor had made
// and logged under the same id, so a restore of the logged checkpoint gave the stale state. The list is never
// read, extended and written back outside a compare-and-set either, so a late writer cannot drop ids from it, as
// it could from the index object (still written, for nodes of earlier versions, and still read: older
// checkpoints are listed only there).
import { randomUUID } from "node:crypto";
import type { KV, KvEntry } from "@nats-io/kv";
import { CheckpointError } from "../../core/checkpoints/index.js";
import { errorMessage, natsFailure, storedUnanswered } from "./errors.js";
import { createOn, updateOn } from "./kv-update.js";

/** The key: not a session id (those have no '.'), so lists of the records bucket pass it by. */
export function idsKey(session: string): string {
  return `${session}.checkpoints`;
}

/**
 * Runs of consecutive ids, [first, last]: the thousands of checkpoints of a long session (one a turn) take a few
 * bytes. `by` is the last reservation's own token: a value written again by another node reserving the same id
 * is not taken for this one's write whose answer was lost.
 */
interface Reserved {
  runs: [number, number][];
  by: string;
}

/** A compare-and-set that keeps losing to other writers gives up after this many tries. */
const TRIES = 20;

/** The ids reserved for the session's checkpoints, oldest first (a reserved id may have no manifest yet, or ever). */
export async function reservedIds(records: KV, session: string): Promise<string[]> {
  const entry = await records.get(idsKey(session)).catch((err: unknown) => {
    throw natsFailure(failure(session, "read"), err);
  });
  return reservedOf(entry, session).runs.flatMap(([first, last]) =>
    Array.from({ length: last - first + 1 }, (_, i) => checkpointId(first + i)),
  );
}

/**
 * Reserves an id for a new checkpoint: `wanted` (the one its node numbered it from its cache), or the next after
 * every id reserved when that is not past them all. `owns` is checked before each try: a node that lost the
 * session stops reserving.
 */
export async function reserveId(
  records: KV,
  session: string,
  wanted: number,
  owns: () => void = () => {},
): Promise<string> {
  const key = idsKey(session);
  for (let tries = 1; ; tries++) {
    owns();
    let entry: KvEntry | null;
    try {
      entry = await records.get(key);
    } catch (err) {
      throw natsFailure(failure(session, "read"), err);
    }
    const { runs, ...newer } = reservedOf(entry, session);
    const last = runs.at(-1);
    const id = Math.max(wanted, (last?.[1] ?? 0) + 1);
    if (last && last[1] === id - 1) last[1] = id;
    else runs.push([id, id]);
    // A newer node's own fields beside the runs are written back as they were: dropping them loses what it keeps.
    const value = JSON.stringify({ ...newer, runs, by: randomUUID() } satisfies Reserved);
    try {
      if (entry) await updateOn(records, key, value, entry.revision);
      else await createOn(records, key, value);
      return checkpointId(id);
    } catch (err) {
      const lost = /wrong last sequence/i.test(errorMessage(err));
      if (!lost && (await storedUnanswered(records, key, value, entry?.revision ?? 0)))
        return checkpointId(id);
      if (!lost || tries >= TRIES) throw natsFailure(failure(session, "write"), err);
    }
  }
}

/** The stored list, with any fields a newer node keeps beside `runs` (unknown here, written back as they are). */
function reservedOf(
  entry: KvEntry | null,
  session: string,
): { runs: [number, number][] } & Record<string, unknown> {
  if (entry?.operation !== "PUT") return { runs: [] };
  let stored: unknown;
  try {
    stored = JSON.parse(entry.string());
  } catch {
    stored = undefined;
  }
  const isRun = (r: unknown) =>
    Array.isArray(r) && r.length === 2 && r.every((n) => Number.isSafeInteger(n) && n > 0) && r[0] <= r[1];
  const runs = (stored as Partial<Reserved> | undefined)?.runs;
  if (typeof stored === "object" && stored !== null && Array.isArray(runs) && runs.every(isRun))
    return { ...(stored as Record<string, unknown>), runs: runs as [number, number][] };
  throw new CheckpointError(
    "brain_error",
    `checkpoints of session ${session}: the list of their ids (key ${idsKey(session)} of bucket ${entry.bucket}) is damaged: it is not {"runs": [[first, last], ...]}; ` +
      `delete it (nats kv del ${entry.bucket} ${idsKey(session)}): checkpoints made since it was damaged are then listed only as far as the index object lists them`,
  );
}

/** A checkpoint's id as CheckpointStore writes them: 000001, ... */
function checkpointId(n: number): string {
  return String(n).padStart(6, "0");
}

function failure(session: string, what: string): string {
  return `checkpoints of session ${session}: cannot ${what} the list of their ids (key ${idsKey(session)} of the records bucket)`;
}
