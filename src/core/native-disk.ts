// What a session's native state takes on disk, for an operator to see (`brain sessions show`): its native dir and
// the folders a rebuild keeps beside it (./rebuild-aside.ts). Retention does not count them (its max_log_mb is the
// log's alone) and should not: it frees space by retiring the log's oldest segments, which cannot shrink a native
// dir, so counted there a large native state would only push out the log, the one record a lost native state is
// rebuilt from. Nor can retention drop native state itself: a session resumes from it, and the kept folder is the
// harness's own state from before the first rebuild, which nothing can make again. The daemon's
// GET /v1/sessions/{id} shows the same count (Brain.nativeDisk), never a list: it would walk every native dir.
import { lstat, readdir } from "node:fs/promises";
import { dirname, join } from "node:path";
import type { NativeDiskView } from "../protocol/api.js";
import { ASIDE_PREFIX, REPLACING } from "./rebuild-aside.js";

/** The bytes counted, and the entries that could not be read (the protocol's NativeDiskView). */
export type NativeDisk = NativeDiskView;

/** What the native dir `native` and the rebuild folders beside it take; a dir that is not there is 0 bytes. */
export async function nativeDisk(native: string): Promise<NativeDisk> {
  const count = { unreadable: 0 };
  const native_bytes = await treeBytes(native, count);
  let rebuild_aside_bytes = 0;
  const beside = await readdir(dirname(native)).catch(() => [] as string[]);
  for (const name of beside.filter((name) => name.startsWith(ASIDE_PREFIX) || name === REPLACING))
    rebuild_aside_bytes += await treeBytes(join(dirname(native), name), count);
  return { native_bytes, rebuild_aside_bytes, ...(count.unreadable ? { unreadable: count.unreadable } : {}) };
}

/** The sizes of the files under `path` (links not followed: a link is its own size). */
async function treeBytes(path: string, count: { unreadable: number }): Promise<number> {
  const st = await lstat(path).catch((err: NodeJS.ErrnoException) => skipped(err, count));
  if (!st) return 0;
  if (!st.isDirectory()) return st.size;
  const names = await readdir(path).catch((err: NodeJS.ErrnoException) => skipped(err, count));
  let bytes = 0;
  for (const name of names ?? []) bytes += await treeBytes(join(path, name), count);
  return bytes;
}

/** Gone meanwhile (an agent at work) is nothing to count; not ours to read is counted as unreadable. */
function skipped(err: NodeJS.ErrnoException, count: { unreadable: number }): undefined {
  if (err.code === "EACCES" || err.code === "EPERM") count.unreadable++;
  else if (err.code !== "ENOENT") throw err;
  return undefined;
}
