// A session record's slot in a list: its summary, or what is wrong with it. Shared by the view of the records
// bucket (./record-view.ts) and the full read it stands in for (./record-read.ts), so both check and tell alike.
import type { KvEntry } from "@nats-io/kv";
import type { SessionSummary, UnreadableSession } from "../../core/store.js";
import {
  deepFreeze,
  describeIssue,
  type SessionRecord,
  StoredSessionRecord,
  summaryOf,
} from "../fs/session-record.js";
import { errorMessage, NatsStoreError } from "./errors.js";

/**
 * A record's summary as a list gives it, or what is wrong with it: thrown by a list not told of unreadable records,
 * as the full read throws it, else told as `unreadable`.
 */
export type Slot = { summary: SessionSummary } | Damaged;
export type Damaged = { error: NatsStoreError; unreadable: UnreadableSession };

/** A stored record, checked as every read of one is: the record, or a brain_error naming the session. */
export function parseRecord(entry: KvEntry, id: string): SessionRecord {
  let value: unknown;
  try {
    value = entry.json();
  } catch (err) {
    throw new NatsStoreError("brain_error", `session ${id}: record is not valid JSON (${errorMessage(err)})`);
  }
  const result = StoredSessionRecord.safeParse(value);
  if (!result.success)
    throw new NatsStoreError("brain_error", `session ${id}: record ${describeIssue(result.error)}`);
  return result.data;
}

export function slotOf(entry: KvEntry): Slot {
  try {
    // Frozen: every list hands out this one object, so a caller changing it in place would change it for all.
    return { summary: deepFreeze(summaryOf(parseRecord(entry, entry.key))) };
  } catch (err) {
    return { error: err as NatsStoreError, unreadable: unreadableOf(entry, err as NatsStoreError) };
  }
}

/**
 * What a list tells of a record it cannot read: its tenant and created_at when it still parses as JSON (else the
 * default tenant's, the operator's, and when it was stored), so lists keep their order and show it to its owner.
 */
function unreadableOf(entry: KvEntry, err: NatsStoreError): UnreadableSession {
  let fields: Record<string, unknown> = {};
  try {
    const value = entry.json() as unknown;
    if (value && typeof value === "object") fields = value as Record<string, unknown>;
  } catch {}
  const { key, bucket } = entry;
  return {
    id: key,
    created_at: typeof fields.created_at === "string" ? fields.created_at : entry.created.toISOString(),
    ...(typeof fields.created_at === "string" ? {} : { undated: true as const }),
    ...(typeof fields.tenant === "string" ? { tenant: fields.tenant } : {}),
    error: `${err.message}; repair it (nats kv put ${bucket} ${key} ...), or drop the session with DELETE /v1/sessions/${key} (a bare nats kv del leaves its log and checkpoints behind)`,
  };
}

export function tell(slot: Damaged, unreadable?: (session: UnreadableSession) => void): void {
  if (!unreadable) throw slot.error;
  unreadable(slot.unreadable);
}
