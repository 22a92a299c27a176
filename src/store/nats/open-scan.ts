// What a takeover needs from a session's log, in one pass: the checkpoints it records (which one to restore)
// and what is open (requests waiting for an answer, turns never settled) for the session's open. The cluster
// log keeps no saved state beside its messages, so this pass is the only read of the whole log an open makes.
// And the native state such an open starts from (restoreNative).
import { mkdir, readdir, rm } from "node:fs/promises";
import { CheckpointError } from "../../core/checkpoints/index.js";
import { type EventLog, forEachEvent } from "../../core/event-log.js";
import { LogState, type OpenState } from "../fs/log-state.js";
import type { ReplicatedCheckpoints } from "./checkpoints.js";
import { errorMessage } from "./errors.js";

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
 * checkpoint, made or restored here (else it is stale: the session went on elsewhere). A checkpoint that cannot
 * be restored (its manifest or a blob damaged in NATS) is passed over for the one the log records before it, said
 * in `warn`: failing the open would fail every prompt of the session on every node, for a checkpoint none asked for.
 */
export async function restoreNative(
  native: string,
  checkpoints: Pick<ReplicatedCheckpoints, "list" | "nativeAt" | "restore">,
  logged: OpenScan["logged"],
  warn: (message: string) => void = () => {},
): Promise<void> {
  const stored = await checkpoints.list();
  if (stored.length === 0) return;
  // The ones the log records, as a REST restore or fork takes: a manifest whose checkpoint.created never
  // became durable (its node died between the two) holds native state past the log's conversation.
  // A log whose first segments retired still names its newest; the store's latest only if it names none.
  const usable = logged.ids.filter((known) => stored.includes(known));
  if (usable.length === 0 && !logged.whole) usable.push(stored.at(-1) as string);
  const latest = usable.at(-1);
  if (latest === undefined) return;
  const empty = (await readdir(native)).length === 0;
  if (!empty && (await checkpoints.nativeAt()) === latest) return;
  let passed: string | undefined;
  for (const id of usable.reverse()) {
    await rm(native, { recursive: true, force: true });
    try {
      await checkpoints.restore(id, native);
      if (passed) warn(`${passed}; the session's native state starts from checkpoint ${id} instead`);
      return;
    } catch (err) {
      // NATS unreachable is no damage: the open fails, to be asked again.
      if (!(err instanceof CheckpointError)) throw err;
      passed ??= errorMessage(err);
    }
  }
  // None intact: the native state starts empty, as for a session never checkpointed.
  warn(`${passed}; no checkpoint the log records could be restored: the session's native state starts empty`);
  await mkdir(native, { recursive: true, mode: 0o700 });
}
