// `brain sessions show ID [--tail N] [--after SEQ]`: a session's record, where its log ends, the requests waiting
// for an answer, its checkpoints, what its native state takes on disk (no retention limit counts it; see
// core/native-disk.ts), and a window of its events. Everything comes from the log's tail or from a
// cursor read, so a session of a million events shows as quickly as a new one.
import type { Brain } from "../../core/brain.js";
import { CheckpointStore } from "../../core/checkpoints/index.js";
import { recordSecrets } from "../../core/credentials.js";
import type { Redactor } from "../../core/redact.js";
import type { SessionStore } from "../../core/store.js";
import type { SessionEvent } from "../../protocol/events.js";
import type { SessionRecord } from "../../protocol/session.js";
import { wholeNumber } from "../args.js";

export const DEFAULT_TAIL = 20;

/** Which events `show` prints: the log's last `tail`, or with `after` the first `tail` after that seq. */
export interface ShowWindow {
  tail: number;
  after?: number;
}

/** `--tail` and `--after` as a window; a value that is not a whole number is refused naming its flag. */
export function showWindow(values: { tail?: string | undefined; after?: string | undefined }): ShowWindow {
  const tail =
    values.tail === undefined ? DEFAULT_TAIL : wholeNumber("--tail", values.tail, "how many events to print");
  return values.after === undefined
    ? { tail }
    : { tail, after: wholeNumber("--after", values.after, "the seq to print events after") };
}

export async function showSession(
  brain: Brain,
  store: Pick<SessionStore, "paths" | "checkpoints">,
  id: string,
  window: ShowWindow,
): Promise<Record<string, unknown>> {
  const record = await brain.record(id);
  const { lastSeq, pending } = await brain.pending(id);
  const checkpoints = await (
    store.checkpoints?.(id) ?? new CheckpointStore(store.paths(id).checkpoints)
  ).list();
  const events =
    window.after === undefined
      ? await lastEvents(brain, id, lastSeq, window.tail)
      : window.tail === 0
        ? []
        : await brain.events(id, window.after, window.tail);
  // As the daemon's views show it: a credential the record holds written out is redacted, in its events too.
  const redactor = shownRedactor(brain, record);
  // The count GET /v1/sessions/{id} gives too (core/native-disk.ts).
  const native_disk = await brain.nativeDisk(record.id);
  return redactor.redactDeep({ ...record, last_seq: lastSeq, pending, checkpoints, native_disk, events });
}

/**
 * What a session's printed record and events keep out: the host's secrets and those its record holds (as
 * Brain.shownRecord). Its log was redacted as it was written, but only of the secrets its session knew then.
 */
export function shownRedactor(brain: Brain, record: SessionRecord): Redactor {
  return brain.redactor.with(recordSecrets(record, process.env));
}

/**
 * The log's last `count` events, read after a cursor computed from the last seq. A compacted log has gaps in its
 * seqs, so the window widens back until it holds `count` events or reaches the log's start.
 */
async function lastEvents(brain: Brain, id: string, lastSeq: number, count: number): Promise<SessionEvent[]> {
  if (count === 0 || lastSeq === 0) return [];
  const start = (await brain.firstSeq(id)) - 1;
  for (let span = count; ; span *= 2) {
    const after = Math.max(lastSeq - span, start, 0);
    const events = await brain.events(id, after);
    if (events.length >= count || after <= start) return events.slice(-count);
  }
}
