// A list the view of the records bucket (./record-view.ts) cannot answer: every record read, a KV read each.
import type { KV, KvEntry } from "@nats-io/kv";
import { listedTenant, type SessionSummary, type UnreadableSession } from "../../core/store.js";
import { oldestFirst, SESSION_ID } from "../fs/session-record.js";
import { natsFailure } from "./errors.js";
import { slotOf, tell } from "./record-slot.js";

/** Session `id`'s record as the bucket holds it now; undefined when it holds none (or its delete marker). */
export async function readEntry(records: KV, id: string): Promise<KvEntry | undefined> {
  let entry: KvEntry | null;
  try {
    entry = await records.get(id);
  } catch (err) {
    throw natsFailure(`cannot read session ${id}`, err);
  }
  return entry && entry.operation === "PUT" ? entry : undefined;
}

/** Records read at once by a list the view cannot answer: each may be as large as the bucket's largest value. */
const READ_ALL_CONCURRENCY = 8;

/**
 * Every session's summary, oldest first, read record by record: a KV read each, a few records held at once. A bad
 * record is told to `unreadable`, or thrown without it. Given `tenant`, only its sessions: every record is still
 * read (a key does not tell whose it is, and a changed key layout would break nodes of older versions in the same
 * cluster), but another tenant's is let go as soon as its value's tenant field is parsed, never checked or kept.
 * `looked` is told of each record checked.
 */
export async function readAllSummaries(
  records: KV,
  entry: (id: string) => Promise<KvEntry | undefined>,
  unreadable?: (session: UnreadableSession) => void,
  tenant?: string,
  looked?: (id: string) => void,
): Promise<SessionSummary[]> {
  const ids: string[] = [];
  try {
    for await (const key of await records.keys()) if (SESSION_ID.test(key)) ids.push(key);
  } catch (err) {
    throw natsFailure("cannot list sessions", err);
  }
  const summaries: SessionSummary[] = [];
  for (let i = 0; i < ids.length; i += READ_ALL_CONCURRENCY) {
    const chunk = await Promise.all(ids.slice(i, i + READ_ALL_CONCURRENCY).map(entry));
    for (const found of chunk) {
      if (!found || (tenant !== undefined && tenantIn(found) !== tenant)) continue;
      looked?.(found.key);
      const slot = slotOf(found);
      if ("error" in slot) tell(slot, unreadable);
      else summaries.push(slot.summary);
    }
  }
  return summaries.sort(oldestFirst);
}

/** Whose record `entry` holds, from its value's tenant field alone (as unreadableOf tells a damaged one's). */
function tenantIn(entry: KvEntry): string {
  try {
    const value = entry.json() as { tenant?: unknown } | null;
    return listedTenant({ tenant: typeof value?.tenant === "string" ? value.tenant : undefined });
  } catch {
    return listedTenant({});
  }
}
