// What a takeover needs from a session's log, in one pass: the checkpoints it records (which one to restore)
// and what is open (requests waiting for an answer, turns never settled) for the session's open. The cluster
// log keeps no saved state beside its messages, so this pass is the only read of the whole log an open makes.
import { type EventLog, forEachEvent } from "../../core/event-log.js";
import { LogState, type OpenState } from "../fs/log-state.js";

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
