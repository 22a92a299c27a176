// A stored session as a create leaves it, made straight in a store: its record, and its log begun with its
// session.opened. A record alone (store.create) is what a maker killed before its first event leaves: lists
// leave that out, and its next open removes it.

import type { SessionRecord } from "../store/fs/session-record.js";
import type { FsSessionStore, NewSession } from "../store/fs/session-store.js";

/**
 * Its session.opened names the harness and an empty config (a list asks of the log only that it was written; a
 * large config is not written twice).
 */
export async function madeSession(store: FsSessionStore, input: NewSession): Promise<SessionRecord> {
  const record = await store.create(input);
  const log = await store.openLog(record.id);
  try {
    await log.append([{ type: "session.opened", data: { harness: record.harness, config: {} } }]);
  } finally {
    await log.close();
  }
  return record;
}
