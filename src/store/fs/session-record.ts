// session.json: what a session is (harness, config, lineage) apart from its event log. The schema is the wire
// one in src/protocol/session.ts.
import fsp from "node:fs/promises";
import nodePath from "node:path";
import type { z } from "zod";
import { tempName } from "../../core/checkpoints/temps.js";
import type { SessionSummary } from "../../core/store.js";
import { SESSION_ID_PATTERN, SessionRecord, StoredSessionRecord } from "../../protocol/session.js";
import { diskError, osMessage, StoreError } from "./errors.js";
import type { LogIO } from "./log-io.js";

/** Ids name directories: this pattern can never be `.`, `..` or hold a separator. */
export const SESSION_ID = SESSION_ID_PATTERN;
export { SessionRecord, StoredSessionRecord };

/** The first problem zod found, as `field "config.model": expected string, received number`. */
export function describeIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return "invalid";
  const field = issue.path.length > 0 ? issue.path.join(".") : "(record)";
  const message = issue.message.endsWith("received undefined") ? "missing" : issue.message;
  // Read by a node older than the one that wrote it (a rolling upgrade): say so, not just "unrecognized".
  const newer =
    issue.code === "unrecognized_keys"
      ? " (a field this version of Brain does not know: written by a newer version? upgrade this node)"
      : "";
  return `field "${field}": ${message}${newer}`;
}

/**
 * Checks a record about to be written against the schema: a bad one is the caller's (`badRequest` makes the
 * store's own error, naming `what` and the first problem).
 */
export function checkRecord(
  what: string,
  value: unknown,
  badRequest: (message: string) => Error,
): SessionRecord {
  const result = SessionRecord.safeParse(value);
  if (!result.success) throw badRequest(`${what}: ${describeIssue(result.error)}`);
  return result.data;
}

/**
 * A new session's record, open and created now, from what the caller asked for (`id` already chosen); created no
 * earlier than `not_before` (its parent's created_at, stamped by a node whose clock may be ahead of this one's).
 */
export function newRecord(
  id: string,
  input: Omit<SessionRecord, "id" | "created_at" | "status"> & { id?: string; not_before?: string },
  badRequest: (message: string) => Error,
): SessionRecord {
  const { not_before, ...fields } = input;
  const now = Date.now();
  const floor = Date.parse(not_before ?? "") || 0; // none, or not a time: no floor
  const created_at = new Date(Math.max(floor, now)).toISOString();
  return checkRecord(`session ${id}`, { ...fields, id, created_at, status: "open" }, badRequest);
}

/**
 * What an update stores: `record` (the stored record as read, `patch` applied, checked) over `stored` (the value as
 * it was stored). Fields this node does not know (StoredSessionRecord ignores them), at the top level or inside a
 * field the patch leaves alone, are written back as they were: a newer node's field outlives an older node's update.
 * Only stored, never handed on: a view or a fork made from the record must not carry what this node cannot check.
 */
export function rewrittenRecord(
  stored: unknown,
  record: SessionRecord,
  patch: Partial<SessionRecord>,
): SessionRecord {
  const was: Record<string, unknown> =
    stored && typeof stored === "object" && !Array.isArray(stored) ? { ...stored } : {};
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(record)) {
    if (value === undefined) continue;
    out[key] = key in patch || !(key in was) ? value : was[key];
  }
  for (const [key, value] of Object.entries(was)) if (!(key in SessionRecord.shape)) out[key] = value;
  return out as SessionRecord;
}

/** session.json's text: pretty-printed, which tells a record cut short from damage (./session-slot.ts isSlotText). */
export function recordText(record: SessionRecord): string {
  return `${JSON.stringify(record, null, 2)}\n`;
}

/**
 * The order of every store's list(): oldest first by `created_at`, then by id (two sessions made in one
 * millisecond). Pages of `GET /v1/sessions` walk it (or its reverse), so every store must sort by this one.
 */
export function oldestFirst(a: OrderedById, b: OrderedById): number {
  if (a.created_at !== b.created_at) return a.created_at < b.created_at ? -1 : 1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

type OrderedById = Pick<SessionRecord, "id" | "created_at">;

/** What a list keeps of a record (its fields that are there, nothing of its config). */
export function summaryOf(record: SessionRecord): SessionSummary {
  const { id, harness, created_at, status, tenant, forked_from, handoff_from } = record;
  return {
    id,
    harness,
    created_at,
    status,
    ...(tenant !== undefined ? { tenant } : {}),
    ...(forked_from ? { forked_from } : {}),
    ...(handoff_from ? { handoff_from } : {}),
  };
}

/** Frozen in place, deeply: for records a store hands every caller as the same object, so none can change it for all. */
export function deepFreeze<T>(value: T): T {
  if (value && typeof value === "object" && !Object.isFrozen(value)) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}

/** session.json's text, checked: the record, or a brain_error naming the file and what is wrong in it. */
export function parseRecord(file: string, text: string, id: string): SessionRecord {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new StoreError("brain_error", `${file}: not valid JSON (${osMessage(err)})`);
  }
  const result = StoredSessionRecord.safeParse(value);
  if (!result.success) throw new StoreError("brain_error", `${file}: ${describeIssue(result.error)}`);
  if (result.data.id !== id) {
    throw new StoreError(
      "brain_error",
      `${file}: field "id": "${result.data.id}" is not its directory's name`,
    );
  }
  return result.data;
}

/**
 * tmp + fsync + rename + fsync(dir): a crash leaves the old session.json or the new one, never a mix. Without
 * `syncDir` the rename is durable only once the caller has synced the directory.
 */
export async function writeRecordFile(
  io: LogIO,
  file: string,
  record: SessionRecord,
  options = { syncDir: true },
): Promise<void> {
  // Named for this process, so that one left by a kill is removed once it is gone (removeStaleTemps).
  const tmp = `${file}.${tempName("tmp")}`;
  try {
    const handle = await fsp.open(tmp, "wx", 0o600);
    try {
      await handle.writeFile(recordText(record));
      await handle.sync();
    } finally {
      await handle.close();
    }
    await fsp.rename(tmp, file);
    if (options.syncDir) await io.syncDir(nodePath.dirname(file));
  } catch (err) {
    await fsp.rm(tmp, { force: true }).catch(() => {});
    throw diskError("write", file, err);
  }
}
