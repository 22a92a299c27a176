import { lstat, mkdir, open, readdir, realpath, rename, rm, rmdir, stat } from "node:fs/promises";
import path from "node:path";
import { copyBlobInto } from "./blobs.js";
import { CheckpointError, errnoCode, isDiskFull, targetRefused } from "./errors.js";
import { fsyncDir, hashRange } from "./io.js";
import type { CheckpointFile, CheckpointManifest } from "./manifest.js";
import { isInside } from "./paths.js";
import { removeDeadTemps, tempName } from "./temps.js";

/** Whether `dir` exists (and is empty); throws when it holds anything or is not a directory. */
async function checkTarget(dir: string): Promise<boolean> {
  const stat = await lstat(dir).catch(async (err: unknown) => {
    if (errnoCode(err) === "ENOENT") return undefined;
    throw await targetError(err, dir);
  });
  if (!stat) return false;
  // The final rename would replace a symlink (live or dangling) with a directory, or fail with ENOTDIR.
  if (stat.isSymbolicLink()) {
    throw targetRefused(`${dir} is a symbolic link; give a new or empty directory that is not a link`);
  }
  if (!stat.isDirectory()) throw targetRefused(`${dir} is a file; give a new or empty directory`);
  const entries = await readdir(dir).catch(async (err: unknown) => {
    throw await targetError(err, dir);
  });
  if (entries.length > 0) {
    throw targetRefused(
      `${dir} is not empty (${entries.length} entries); restore into a new or empty directory`,
    );
  }
  return true;
}

/**
 * The file system's refusal to read or make the target, as the caller's mistake naming what is in the way;
 * anything else (a failing disk) stays the host's error.
 */
async function targetError(err: unknown, dir: string): Promise<unknown> {
  const fix = "give a new or empty directory the daemon can write";
  switch (errnoCode(err)) {
    case "ENOTDIR":
    case "EEXIST": {
      const file = await fileOnPath(dir);
      return targetRefused(
        `${file ?? "a part of its path"} is not a directory, so ${dir} cannot be one; ${fix}`,
      );
    }
    case "EACCES":
    case "EPERM":
      return targetRefused(`permission denied making or reading ${dir}; ${fix}`);
    case "EROFS":
      return targetRefused(`${dir} is on a read-only file system; ${fix}`);
    case "ENOENT": {
      // Below a dangling link (makeDirs found it "existing"), or where the file system makes no directories.
      const file = await fileOnPath(dir);
      if (file) return targetRefused(`${file} is not a directory, so ${dir} cannot be one; ${fix}`);
      return targetRefused(
        `${dir} cannot be made: its file system does not create directories there; ${fix}`,
      );
    }
    case "ERR_INVALID_ARG_VALUE":
      // Node refuses a path with a NUL byte before any system call: the caller's input, not a host failure.
      return targetRefused(
        `${JSON.stringify(dir)} cannot be a path${dir.includes("\0") ? " (it contains a NUL byte)" : ""}; ${fix}`,
      );
    case "ENAMETOOLONG":
    case "ELOOP":
      return targetRefused(`${dir} cannot be resolved (${errnoCode(err)}); ${fix}`);
    default:
      return err;
  }
}

/**
 * `mkdir -p`, not Node's recursive mkdir: where a file system answers ENOENT for a directory below one it has (procfs,
 * sysfs: `/proc/self/a/b`), that one makes the parent again and retries forever, never settling and spinning one of
 * libuv's four threadpool threads, so a few such restores stopped all of the daemon's file I/O. Here an ENOENT once
 * the parent exists is the answer (targetError names it).
 */
async function makeDirs(dir: string): Promise<void> {
  const made = await mkdir(dir).then(
    () => true,
    (err: unknown) => {
      if (errnoCode(err) === "EEXIST") return true;
      if (errnoCode(err) === "ENOENT" && path.dirname(dir) !== dir) return false;
      throw err;
    },
  );
  if (made) return;
  await makeDirs(path.dirname(dir));
  await mkdir(dir).catch((err: unknown) => {
    if (errnoCode(err) !== "EEXIST") throw err;
  });
}

/** The nearest existing ancestor of `dir` when it is not a directory (what made a mkdir fail with ENOTDIR). */
async function fileOnPath(dir: string): Promise<string | undefined> {
  for (let at = path.dirname(dir); at !== path.dirname(at); at = path.dirname(at)) {
    if (!(await lstat(at).catch(() => undefined))) continue;
    // Through links: one to a directory (/proc/self) is one; a dangling one is in the way.
    return (await stat(at).catch(() => undefined))?.isDirectory() ? undefined : at;
  }
  return undefined;
}

/**
 * Refuses a target inside `root` (symlinks resolved, the target need not exist yet): restoring there would
 * write into Brain's own files (a session's native/, checkpoints/, another session).
 */
export async function refuseInside(intoDir: string, root: string, rootName: string): Promise<void> {
  const realRoot = await realpath(root).catch(() => path.resolve(root));
  let existing = path.resolve(intoDir);
  const rest: string[] = [];
  for (;;) {
    try {
      existing = await realpath(existing);
      break;
    } catch {
      const parent = path.dirname(existing);
      if (parent === existing) break;
      rest.unshift(path.basename(existing));
      existing = parent;
    }
  }
  if (isInside(realRoot, path.join(existing, ...rest))) {
    throw targetRefused(
      `${intoDir} is inside ${rootName} (${root}), where Brain keeps its sessions; restore into a directory outside it`,
    );
  }
}

/**
 * Rebuilds the checkpoint's files in a hidden sibling of `intoDir` and renames it into place, so `intoDir`
 * either stays as it was or holds the complete, fsynced restore; never half of one.
 */
export async function restoreManifest(
  manifest: CheckpointManifest,
  blobsDir: string,
  intoDir: string,
): Promise<void> {
  const target = path.resolve(intoDir);
  const existed = await checkTarget(target);
  const parent = path.dirname(target);
  const staging = path.join(parent, `.${path.basename(target)}.${tempName("restoring")}`);
  try {
    await makeDirs(parent);
    // A restore into this target that was killed midway left its staging dir here.
    await removeDeadTemps(parent, `.${path.basename(target)}.restoring-`);
    // Private until renamed into place; the target itself is the caller's to open up.
    await mkdir(staging, { mode: 0o700 });
  } catch (err) {
    throw notRestored(await targetError(err, target), manifest.id, target);
  }
  try {
    const dirs = new Set<string>([staging]);
    for (const file of manifest.files) await restoreFile(file, blobsDir, staging, dirs, manifest.id);
    for (const dir of dirs) await fsyncDir(dir, true);
    if (existed) {
      // POSIX rename replaces an empty directory; Windows refuses, so remove it first there.
      await rename(staging, target).catch(async (err: unknown) => {
        if (!["EEXIST", "ENOTEMPTY", "EPERM", "EACCES"].includes(errnoCode(err) ?? "")) throw err;
        await rmdir(target);
        await rename(staging, target);
      });
    } else {
      await rename(staging, target);
    }
  } catch (err) {
    await rm(staging, { recursive: true, force: true });
    throw notRestored(err, manifest.id, target);
  }
  // Outside: the files are in place by now, and a failure here is not one that restored nothing.
  await fsyncDir(parent, true);
}

/**
 * Whether `intoDir` holds exactly the files of `manifest`, byte for byte, and nothing else: what a restore of it
 * leaves once renamed into place (a restore is all or nothing). A keyed restore killed between that rename and
 * keeping its key finds its files so on its retry. Made durable as the restore would have (its parent's entry).
 */
export async function holdsManifest(manifest: CheckpointManifest, intoDir: string): Promise<boolean> {
  const target = path.resolve(intoDir);
  if (!(await lstat(target).catch(() => undefined))?.isDirectory()) return false;
  const files = new Map(manifest.files.map((file) => [file.path, file]));
  const seen = await sameTree(target, "", files);
  if (seen === undefined || seen !== files.size) return false;
  await fsyncDir(path.dirname(target), true);
  return true;
}

/**
 * How many of `files` the tree at `dir` holds, each with its bytes; undefined at anything else: another file, a
 * link, an empty directory (a restore makes only the directories of its files).
 */
async function sameTree(
  dir: string,
  prefix: string,
  files: Map<string, CheckpointFile>,
): Promise<number | undefined> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => undefined);
  if (!entries || (prefix !== "" && entries.length === 0)) return undefined;
  let seen = 0;
  for (const entry of entries) {
    const at = path.join(dir, entry.name);
    const name = `${prefix}${entry.name}`;
    if (entry.isDirectory()) {
      const below = await sameTree(at, `${name}/`, files);
      if (below === undefined) return undefined;
      seen += below;
      continue;
    }
    const file = files.get(name);
    if (!entry.isFile() || !file || !(await sameBytes(at, file))) return undefined;
    seen++;
  }
  return seen;
}

async function sameBytes(at: string, file: CheckpointFile): Promise<boolean> {
  const handle = await open(at, "r").catch(() => undefined);
  if (!handle) return false;
  try {
    if ((await handle.stat()).size !== file.size) return false;
    for (const { offset, length, sha256 } of file.segments) {
      if ((await hashRange(handle, offset, offset + length)) !== sha256) return false;
    }
    return true;
  } catch {
    return false;
  } finally {
    await handle.close();
  }
}

/**
 * Writing the restore failed after the target was checked. Its staging dir is gone and the target is as it was:
 * said so, naming the checkpoint and what to do, not as a bare ENOSPC or ENOTEMPTY naming neither.
 */
function notRestored(err: unknown, id: string, target: string): unknown {
  const code = errnoCode(err);
  if (err instanceof CheckpointError || code === undefined || code.startsWith("ERR_")) return err;
  if (["ENOTEMPTY", "EEXIST", "ENOTDIR"].includes(code)) {
    // The final rename found the target made or filled since it was checked (another restore into it, say).
    return targetRefused(
      `${target} was made or filled by something else while checkpoint ${id} was being restored into it; ` +
        "nothing of the checkpoint was written there: restore into a new or empty directory nothing else writes to",
    );
  }
  // The fix names no path: for a fork the target is a directory of the daemon's, which the caller never chose.
  const full = isDiskFull(code);
  const fix = full ? "free space on the daemon's disk" : "check the daemon's disk";
  return new CheckpointError(
    full ? "insufficient_storage" : "brain_error",
    `restore failed: the files of checkpoint ${id} could not be written (${(err as Error).message}); ` +
      `nothing was restored: ${fix} and try again`,
  );
}

async function restoreFile(
  file: CheckpointFile,
  blobsDir: string,
  root: string,
  dirs: Set<string>,
  checkpoint: string,
): Promise<void> {
  const parts = file.path.split("/");
  let dir = root;
  for (const part of parts.slice(0, -1)) {
    dir = path.join(dir, part);
    dirs.add(dir);
  }
  await mkdir(dir, { recursive: true, mode: 0o700 });
  // The original's mode (the umask may only tighten it); manifests from before modes were kept: owner only.
  const out = await open(path.join(root, ...parts), "wx", file.mode ?? 0o600);
  try {
    for (const segment of file.segments) await copyBlobInto(blobsDir, segment, out, file.path, checkpoint);
    // Zero pages were left out (holes read as zeros), those at the end too: the segments, each checked for its
    // length and hash, cover exactly file.size bytes (parseManifest), so that is the file's size.
    await out.truncate(file.size);
    await out.sync();
  } finally {
    await out.close();
  }
}
