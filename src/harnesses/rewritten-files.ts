// The record of native files a harness rewrote in place (a relocation's path rewrite): kept in the native dir
// beside the files, read and written like any other of Brain's files there, never through a link.
import { join } from "node:path";
import type { NativeFile } from "../protocol/runner.js";
import { readAgentFileSync, writeAgentFileSync } from "./agent-files.js";

/** Where a harness keeps the record rewrittenFilesSync reads, at the native dir's top: never a native file listed. */
export const REWRITTEN_MARKER = "native-rewritten.json";

/**
 * The native files (native-dir relative) a harness rewrote in place, recorded in the file `marker` under the root:
 * their start is no longer what earlier checkpoints hold, so each later checkpoint stores them whole. Kept on disk,
 * as the harness that rewrote one may be closed and reopened before the next checkpoint is taken.
 */

export function rewrittenFilesSync(root: string, marker: string): Set<string> {
  try {
    const listed: unknown = JSON.parse(readAgentFileSync(root, join(root, marker)) ?? "[]");
    return new Set(Array.isArray(listed) ? listed.filter((p) => typeof p === "string") : []);
  } catch (err) {
    if (err instanceof SyntaxError) return new Set();
    throw err;
  }
}

/**
 * Drops from the files rewrittenFilesSync lists those `stored` (a checkpoint's listing, native-dir relative) holds
 * whole, not as append-only: that checkpoint has their new start, and the next may build on it.
 */
export function forgetRewrittenSync(root: string, marker: string, stored: readonly NativeFile[]): void {
  const files = rewrittenFilesSync(root, marker);
  const whole = stored.filter((f) => !f.append_only && files.has(f.path));
  if (whole.length === 0) return;
  for (const f of whole) files.delete(f.path);
  writeAgentFileSync(root, join(root, marker), JSON.stringify([...files]));
}

/** Adds `path` (native-dir relative) to the files rewrittenFilesSync lists. */
export function noteRewrittenSync(root: string, marker: string, path: string): void {
  const files = rewrittenFilesSync(root, marker).add(path);
  writeAgentFileSync(root, join(root, marker), JSON.stringify([...files]));
}
