import { type FileHandle, readlink } from "node:fs/promises";
import { errnoCode } from "./errors.js";

/**
 * Where the kernel says an open file is now (Linux's /proc/self/fd), or undefined where there is no such view
 * (other systems, no /proc mounted). Unlike a second lookup by name it names the file the descriptor holds, so a
 * directory on the way swapped for a symbolic link between a check and the open cannot fool it.
 */
export async function openedPath(handle: FileHandle): Promise<string | undefined> {
  if (process.platform !== "linux") return undefined;
  try {
    return await readlink(fdPath(handle));
  } catch (err) {
    if (errnoCode(err) === "ENOENT") return undefined;
    throw err;
  }
}

/**
 * A name for the open file or directory itself (Linux): `${fdPath(dir)}/name` is looked up in that directory
 * whatever its old name points at now, as openat(2) would. Only meaningful where openedPath answered.
 */
export function fdPath(handle: FileHandle | number): string {
  return `/proc/self/fd/${typeof handle === "number" ? handle : handle.fd}`;
}
