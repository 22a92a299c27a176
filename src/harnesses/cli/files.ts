// Native files for checkpoints and small JSON state files the CLI harnesses keep beside the CLI's own.
import { constants } from "node:fs";
import { type FileHandle, lstat, open, readdir, realpath } from "node:fs/promises";
import { join, relative, sep } from "node:path";
import { fdPath, openedPath } from "../../core/checkpoints/opened.js";
import { isInside } from "../../core/checkpoints/paths.js";
import type { NativeFile } from "../../protocol/runner.js";
import { readAgentFile, replaceAgentFile } from "../agent-files.js";

/**
 * Every regular file under `nativeDir/sub` (recursively), as NativeFiles relative to `nativeDir` with `/`
 * separators. `include` filters by that relative path; `appendOnly` says which files only ever grow.
 * The harness's agent may be swapping directories for symbolic links as this runs: where the system shows
 * where a descriptor is (Linux), each directory is read through its open descriptor, so the walk cannot be led
 * outside the native dir (the checkpoint re-checks every file's location either way).
 */
export async function listNativeFiles(
  nativeDir: string,
  sub: string,
  options: { include?: (path: string) => boolean; appendOnly: (path: string) => boolean },
): Promise<NativeFile[]> {
  const out: NativeFile[] = [];
  const root = await realpath(nativeDir).catch(() => undefined);
  if (root === undefined) return out;
  /** `dir` names the directory for the paths listed; `lookup` reaches it (through its parent's descriptor). */
  const walk = async (dir: string, lookup: string, flags: number): Promise<void> => {
    let handle: FileHandle | undefined;
    try {
      handle = await open(lookup, constants.O_RDONLY | (constants.O_DIRECTORY ?? 0) | flags);
    } catch {
      // Windows cannot open a directory: read it by name there, as everything else is.
      if (process.platform !== "win32") return;
    }
    try {
      const at = handle && (await openedPath(handle));
      if (at !== undefined && !isInside(root, at)) return;
      const base = handle && at !== undefined ? fdPath(handle) : dir;
      let names: string[];
      try {
        names = await readdir(base);
      } catch {
        return;
      }
      for (const name of names.sort()) {
        // A CLI's lock and temp files come and go while it runs: one listed but gone by now is not in the checkpoint.
        const st = await lstat(join(base, name)).catch((err: NodeJS.ErrnoException) => {
          if (err.code === "ENOENT") return undefined;
          throw err;
        });
        if (!st) continue;
        const full = join(dir, name);
        // O_NOFOLLOW: a directory swapped for a link since the lstat is not followed.
        if (st.isDirectory()) await walk(full, join(base, name), constants.O_NOFOLLOW ?? 0);
        else if (st.isFile()) {
          const path = relative(root, full).split(sep).join("/");
          if (options.include && !options.include(path)) continue;
          out.push({ path, size: st.size, append_only: options.appendOnly(path) });
        }
      }
    } finally {
      await handle?.close();
    }
  };
  const top = join(root, sub);
  await walk(top, top, 0);
  return out;
}

/**
 * The state file's JSON (`file` under the native dir `root`), or undefined when there is none (a link planted in
 * its place, or for a directory on the way, is an error).
 */
export async function readJsonFile<T>(root: string, file: string): Promise<T | undefined> {
  const text = await readAgentFile(root, file);
  return text === undefined ? undefined : (JSON.parse(text) as T);
}

/**
 * Written to a temporary name and renamed: a crash leaves the old file or the new one, never half of one. The
 * native dir may be mounted into the CLI's container: neither name is followed if it is a link.
 */
export async function writeJsonFile(root: string, file: string, value: unknown): Promise<void> {
  await replaceAgentFile(root, file, `${JSON.stringify(value, null, 2)}\n`);
}
