import { randomUUID } from "node:crypto";
import { lstat, mkdir, open, readdir, realpath, rename, rm, rmdir } from "node:fs/promises";
import path from "node:path";
import { copyBlobInto } from "./blobs.js";
import { CheckpointError, errnoCode } from "./errors.js";
import { fsyncDir } from "./io.js";
import type { CheckpointFile, CheckpointManifest } from "./manifest.js";
import { isInside } from "./paths.js";

/** Whether `dir` exists (and is empty); throws when it holds anything or is not a directory. */
async function checkTarget(dir: string): Promise<boolean> {
  // The final rename would replace a symlink (live or dangling) with a directory, or fail with ENOTDIR.
  const stat = await lstat(dir).catch(() => undefined);
  if (stat?.isSymbolicLink()) {
    throw new CheckpointError(
      "bad_request",
      `restore refused: ${dir} is a symbolic link; give a new or empty directory that is not a link`,
    );
  }
  let entries: string[];
  try {
    entries = await readdir(dir);
  } catch (err) {
    if (errnoCode(err) === "ENOENT") return false;
    if (errnoCode(err) === "ENOTDIR") {
      throw new CheckpointError(
        "bad_request",
        `restore refused: ${dir} is a file; give a new or empty directory`,
      );
    }
    throw err;
  }
  if (entries.length > 0) {
    throw new CheckpointError(
      "bad_request",
      `restore refused: ${dir} is not empty (${entries.length} entries); restore into a new or empty directory`,
    );
  }
  return true;
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
    throw new CheckpointError(
      "bad_request",
      `restore refused: ${intoDir} is inside ${rootName} (${root}), where Brain keeps its sessions; restore into a directory outside it`,
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
  await mkdir(parent, { recursive: true });
  const staging = path.join(parent, `.${path.basename(target)}.restoring-${randomUUID()}`);
  // Private until renamed into place; the target itself is the caller's to open up.
  await mkdir(staging, { mode: 0o700 });
  try {
    const dirs = new Set<string>([staging]);
    for (const file of manifest.files) await restoreFile(file, blobsDir, staging, dirs);
    for (const dir of dirs) await fsyncDir(dir);
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
    await fsyncDir(parent);
  } catch (err) {
    await rm(staging, { recursive: true, force: true });
    throw err;
  }
}

async function restoreFile(
  file: CheckpointFile,
  blobsDir: string,
  root: string,
  dirs: Set<string>,
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
    for (const segment of file.segments) await copyBlobInto(blobsDir, segment, out, file.path);
    const size = (await out.stat()).size;
    if (size !== file.size) {
      throw new CheckpointError(
        "brain_error",
        `restore failed: ${JSON.stringify(file.path)} came out ${size} bytes, the manifest says ${file.size}`,
        file.path,
      );
    }
    await out.sync();
  } finally {
    await out.close();
  }
}
