// What a takeover needs from a session's log, in one pass: the checkpoints it records (which one to restore)
// and what is open (requests waiting for an answer, turns never settled) for the session's open. The cluster
// log keeps no saved state beside its messages, so this pass is the only read of the whole log an open makes.
// And the native state such an open starts from (restoreNative).
import { readdir, rm } from "node:fs/promises";
import { type EventLog, forEachEvent } from "../../core/event-log.js";
import { LogState, type OpenState } from "../fs/log-state.js";
import type { ReplicatedCheckpoints } from "./checkpoints.js";

export interface OpenScan {
  /** Checkpoint ids the log records, oldest first; `whole` is false when it no longer starts at seq 1. */
  logged: { ids: string[]; whole: boolean };
  /** What is open as of seq `seq`, the last event read. */
  opened: OpenState & { seq: number };
}

/** Reads the log a page at a time, keeping ids and open requests alone: a long log is never held whole. */
export async function scanForOpen(log: Pick<EventLog, "read">): Promise<OpenScan> {
  let first: number | undefined;
  let seq = 0;
  const ids: string[] = [];
  const state = new LogState();
  await forEachEvent(log, (e) => {
    first ??= e.seq;
    seq = e.seq;
    if (e.type === "checkpoint.created") ids.push((e.data as { id: string }).id);
    state.observe([e]);
  });
  return { logged: { ids, whole: (first ?? 1) === 1 }, opened: { ...state.snapshot(), seq } };
}

/**
 * A session taken over from another node (or reopened on a fresh one) starts from its last checkpoint: the
 * native state as of its last completed turn. This node's own native dir is kept only while it holds that
 * checkpoint, made or restored here (else it is stale: the session went on elsewhere).
 */
export async function restoreNative(
  native: string,
  checkpoints: Pick<ReplicatedCheckpoints, "list" | "nativeAt" | "restore">,
  logged: OpenScan["logged"],
): Promise<void> {
  const stored = await checkpoints.list();
  if (stored.length === 0) return;
  // The last one the log records, as a REST restore or fork takes: a manifest whose checkpoint.created never
  // became durable (its node died between the two) holds native state past the log's conversation.
  // A log whose first segments retired still names its newest; the store's latest only if it names none.
  const newest = logged.ids.findLast((known) => stored.includes(known));
  const latest = newest === undefined && !logged.whole ? stored.at(-1) : newest;
  if (latest === undefined) return;
  const empty = (await readdir(native)).length === 0;
  if (!empty && (await checkpoints.nativeAt()) === latest) return;
  await rm(native, { recursive: true, force: true });
  await checkpoints.restore(latest, native);
}
