// What a session's files take on disk, for the bounds on a session's and a tenant's bytes (core/log-bound.ts):
// stats only, no read and no lock, as a bound checks at every prompt.
import type { Stats } from "node:fs";
import fsp from "node:fs/promises";
import { disk } from "./errors.js";
import { listSealed } from "./segments.js";

/** The sizes of a log's files: its active segment `events` and the sealed ones. */
export async function logFileBytes(events: string): Promise<number> {
  const files = [events, ...(await listSealed(events)).map((segment) => segment.path)];
  const sizes = await Promise.all(files.map(fileBytes));
  return sizes.reduce((sum, size) => sum + size, 0);
}

/** The size of `file`, 0 when there is none. */
export async function fileBytes(file: string): Promise<number> {
  return (await statOf(file))?.size ?? 0;
}

/** `file`'s stat, undefined when there is none. */
export function statOf(file: string): Promise<Stats | undefined> {
  return disk("stat", file, () =>
    fsp.stat(file).catch((err: NodeJS.ErrnoException) => {
      if (err.code === "ENOENT") return undefined;
      throw err;
    }),
  );
}
