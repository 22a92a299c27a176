// Small private JSON files that say which Brain started something (a process group, a container), so that the
// next Brain on the same home can clean up after one that died: written owner-only, never through a link.
import { closeSync, constants, mkdirSync, openSync, readdirSync, writeSync } from "node:fs";
import { join } from "node:path";
import { processStart } from "./process-identity.js";

/** This process as a record's owner: its pid and start (a pid alone is reused once the process is gone). */
export function thisOwner(): { pid: number; start?: string } {
  return { pid: process.pid, start: processStart(process.pid) };
}

/** Writes `record` to `<dir>/<name>` (dir 0700, file 0600, not through a link). Throws what the disk says. */
export function writeOwnerRecord(dir: string, name: string, record: object): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW;
  const fd = openSync(join(dir, name), flags, 0o600);
  try {
    writeSync(fd, JSON.stringify(record));
  } finally {
    closeSync(fd);
  }
}

/** The record files in `dir`, or none when it does not exist yet. */
export function ownerRecordNames(dir: string): string[] {
  try {
    return readdirSync(dir).filter((name) => name.endsWith(".json"));
  } catch {
    return [];
  }
}
