// Where a rebuild puts the native state it replaces. Only the first rebuild's is kept: that one is the harness's
// own state, which nothing can make again; every later rebuild replaces a state that was itself rebuilt from the
// log, which the log can make again, so it is removed once the new one is written. Kept each time, a controller
// calling rebuild in a loop would fill the host's disk (no byte limit counts these folders).
import { mkdir, readdir, rename, rm, rmdir } from "node:fs/promises";
import { dirname, join } from "node:path";

/** The prefix of the one folder that keeps the native state from before a session's first rebuild. */
export const ASIDE_PREFIX = "native-before-rebuild-";
/**
 * Where a rebuild holds the files it replaces while it seeds anew. One name, so a crash leaves one such folder at
 * most, and the next rebuild finds it (putBack) and starts from a whole state.
 */
export const REPLACING = "native-being-rebuilt";

/** Moves a dir's files into another; the agent's working tree (`work`) stays where it is. */
async function moveFiles(from: string, to: string): Promise<void> {
  for (const name of await readdir(from)) {
    if (name !== "work") await rename(join(from, name), join(to, name));
  }
}

/**
 * Puts the files of `holding` back into the native dir, over any of the same name, and removes `holding`. Each
 * file moves whole, so a crash here leaves what is not back yet in `holding`, for the next call to move.
 */
async function putBack(native: string, holding: string): Promise<void> {
  let names: string[];
  try {
    names = await readdir(holding);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return;
    throw err;
  }
  for (const name of names) {
    await rm(join(native, name), { recursive: true, force: true });
    await rename(join(holding, name), join(native, name));
  }
  await rmdir(holding);
}

/**
 * Seeds a native dir anew (`seed`), the old files moved out first. The first rebuild keeps them, in a
 * `native-before-rebuild-*` folder; a later one removes them once the seeding has written the new state. A
 * seeding that fails (the writer crashed, the disk filled) puts the old files back: the session is left as it
 * was, not without its native state. `aside` is the kept folder, the same one for every rebuild of a session.
 */
export async function reseed<T>(
  native: string,
  seed: () => Promise<T>,
): Promise<{ seeded: T; aside: string }> {
  const dir = dirname(native);
  const replacing = join(dir, REPLACING);
  // A crash during an earlier rebuild: its old files, or part of them, are still held.
  await putBack(native, replacing);
  // More than one is kept only by a Brain from before this rule: the first (its name is its time) is the original.
  const [kept, ...later] = (await readdir(dir)).filter((name) => name.startsWith(ASIDE_PREFIX)).sort();
  for (const name of later) await rm(join(dir, name), { recursive: true, force: true });
  await mkdir(replacing);
  await moveFiles(native, replacing);
  const aside = join(dir, kept ?? `${ASIDE_PREFIX}${new Date().toISOString().replace(/[:.]/g, "-")}`);
  // Named as kept only once every file is in it (a rename, whole or not at all): a crash while the files move
  // leaves them in `replacing`, put back by the next rebuild, never a kept folder missing part of the original.
  if (kept === undefined) await rename(replacing, aside);
  let seeded: T;
  try {
    seeded = await seed();
  } catch (err) {
    // What the seeding wrote goes first: were the old files put back over it, a file it wrote that the old state
    // had not would stay with them.
    for (const name of await readdir(native)) {
      if (name !== "work") await rm(join(native, name), { recursive: true, force: true });
    }
    if (kept === undefined) await rename(aside, replacing);
    await putBack(native, replacing);
    throw err;
  }
  if (kept !== undefined) await rm(replacing, { recursive: true, force: true });
  return { seeded, aside };
}
