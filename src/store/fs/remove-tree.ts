// Removing a session's directory whatever its agent left in it. A CLI agent runs with HOME and its working
// directory under the session's native dir, and tools it runs make directories without write permission (Go's
// module cache is read-only by design): rm stops at the first of them, leaving the session half deleted.
import { constants } from "node:fs";
import fsp from "node:fs/promises";
import nodePath from "node:path";
import { tempName } from "../../core/checkpoints/temps.js";
import type { LogIO } from "./log-io.js";

/**
 * Removes a session's directory so that a crash part way leaves the session whole or gone, never half: it is
 * renamed out of the sessions' names first (one atomic step, made durable), then removed. rm alone, killed part
 * way, left what it had not reached yet under the session's id (the native files without the record, never listed
 * again and never removed; or a record and log over half its native files). A directory a killed removal left is
 * named for its dead writer (tempName): the next start's sweep removes it (removeDeadTemps).
 */
export async function removeSessionDir(dir: string, io: Pick<LogIO, "syncDir">): Promise<void> {
  const parent = nodePath.dirname(dir);
  const doomed = nodePath.join(parent, `.${nodePath.basename(dir)}.${tempName("tmp")}`);
  try {
    await fsp.rename(dir, doomed);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return;
    throw err;
  }
  await io.syncDir(parent);
  await removeTree(doomed);
}

/** `rm -rf dir`; where a directory inside refuses (EACCES, EPERM), its owner's permissions are restored first. */
export async function removeTree(dir: string): Promise<void> {
  try {
    await fsp.rm(dir, { recursive: true, force: true });
    return;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== "EACCES" && code !== "EPERM") throw err;
  }
  await allowRemoval(dir);
  await fsp.rm(dir, { recursive: true, force: true });
}

/**
 * Gives the owner rwx on `dir` and every directory below it, through descriptors opened without following links:
 * an agent swapping a directory for a link meanwhile cannot lead the chmod to a directory outside.
 */
async function allowRemoval(dir: string): Promise<void> {
  let handle: fsp.FileHandle;
  try {
    handle = await fsp.open(dir, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  } catch {
    return; // not a directory (or already gone): nothing to open up
  }
  try {
    const { mode } = await handle.stat();
    await handle.chmod((mode & 0o7777) | 0o700);
  } catch {
    return;
  } finally {
    await handle.close();
  }
  const names = await fsp.readdir(dir).catch(() => [] as string[]);
  for (const name of names) await allowRemoval(nodePath.join(dir, name));
}
