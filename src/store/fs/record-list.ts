// The embedded store's list: every session.json's summary, and what it says of one that cannot be read (damaged,
// or unreadable to the daemon): left out without a word, its owner would take it for deleted; thrown, it would
// fail every tenant's list.
import type { Dirent } from "node:fs";
import fsp from "node:fs/promises";
import { listedTenant, type SessionSummary, type UnreadableSession } from "../../core/store.js";
import { diskError, osMessage } from "./errors.js";
import type { RecordCache } from "./record-cache.js";
import { oldestFirst, SESSION_ID } from "./session-record.js";

/** Sessions looked at once by list(): enough to overlap the stats and reads, few enough to stay clear of EMFILE. */
const LIST_CONCURRENCY = 32;

/**
 * Every session's summary under `root`, oldest first. A directory without session.json (a create cut short) is
 * skipped. One directory read and one stat per session: only records changed since `records` read them are read
 * again. A record that cannot be read throws, or is given to `unreadable` and left out. Given `tenant`, only its
 * sessions: those `records` knows are another's are not looked at (neither stat nor read).
 */
export async function listRecords(
  root: string,
  records: RecordCache,
  paths: (id: string) => { dir: string; record: string },
  unreadable?: (session: UnreadableSession) => void,
  tenant?: string,
): Promise<SessionSummary[]> {
  let entries: Dirent[];
  try {
    entries = await fsp.readdir(root, { withFileTypes: true });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw diskError("list", root, err);
  }
  const ids = entries.filter((e) => e.isDirectory() && SESSION_ID.test(e.name)).map((e) => e.name);
  records.keepOnly(new Set(ids));
  const known = (id: string) => records.tenantOf(id);
  const looked = tenant === undefined ? ids : ids.filter((id) => (known(id) ?? tenant) === tenant);
  const theirs = (session: { tenant?: string }) => tenant === undefined || listedTenant(session) === tenant;
  const summary = (id: string) => {
    const { record, dir } = paths(id);
    return records.summary(id, record).catch(async (err: unknown) => {
      // Thrown only when the caller would see it: another tenant's damaged record is not this list's to fail on.
      const damaged =
        unreadable || tenant !== undefined ? await unreadableSession(id, record, dir, err) : undefined;
      if (!damaged || (theirs(damaged) && !unreadable)) throw err;
      // Indexed by the tenant it names (the default's when none), as lists show it: read again by that tenant's.
      records.index(id, listedTenant(damaged));
      if (theirs(damaged)) unreadable?.(damaged);
      return undefined;
    });
  };
  const summaries: SessionSummary[] = [];
  for (let i = 0; i < looked.length; i += LIST_CONCURRENCY) {
    const read = await Promise.all(looked.slice(i, i + LIST_CONCURRENCY).map(summary));
    for (const r of read) if (r && theirs(r)) summaries.push(r);
  }
  return summaries.sort(oldestFirst);
}

/**
 * The session `id` whose record in `file` (directory `dir`) could not be read: `err` and the fix. Its tenant and
 * created_at when the file still parses as JSON (else the default tenant's, the operator's, and the file's mtime),
 * so lists keep their order and show it only to whom it belongs.
 */
export async function unreadableSession(
  id: string,
  file: string,
  dir: string,
  err: unknown,
): Promise<UnreadableSession> {
  const fields = await fsp.readFile(file, "utf8").then(
    (text) => {
      try {
        const value = JSON.parse(text) as unknown;
        return value && typeof value === "object" ? (value as Record<string, unknown>) : {};
      } catch {
        return {};
      }
    },
    () => ({}) as Record<string, unknown>,
  );
  const mtime = await fsp.stat(file).then(
    (st) => st.mtime,
    () =>
      fsp.stat(dir).then(
        (st) => st.mtime,
        () => new Date(0),
      ),
  );
  const created = typeof fields.created_at === "string" ? fields.created_at : mtime.toISOString();
  const error = `${osMessage(err)}; repair ${file} (or restore it from a backup), or drop the session with DELETE /v1/sessions/${id} (or remove ${dir})`;
  return {
    id,
    created_at: created,
    ...(typeof fields.created_at === "string" ? {} : { undated: true as const }),
    ...(typeof fields.tenant === "string" ? { tenant: fields.tenant } : {}),
    error,
  };
}
