// Native files for checkpoints and small JSON state files the CLI harnesses keep beside the CLI's own.
import { lstat, readdir, readFile, rename, writeFile } from "node:fs/promises";
import { join, relative, sep } from "node:path";
import type { NativeFile } from "../../protocol/runner.js";

/**
 * Every regular file under `nativeDir/sub` (recursively), as NativeFiles relative to `nativeDir` with `/`
 * separators. `include` filters by that relative path; `appendOnly` says which files only ever grow.
 */
export async function listNativeFiles(
  nativeDir: string,
  sub: string,
  options: { include?: (path: string) => boolean; appendOnly: (path: string) => boolean },
): Promise<NativeFile[]> {
  const out: NativeFile[] = [];
  const walk = async (dir: string): Promise<void> => {
    let names: string[];
    try {
      names = await readdir(dir);
    } catch {
      return;
    }
    for (const name of names.sort()) {
      const full = join(dir, name);
      // A CLI's lock and temp files come and go while it runs: one listed but gone by now is not in the checkpoint.
      const st = await lstat(full).catch((err: NodeJS.ErrnoException) => {
        if (err.code === "ENOENT") return undefined;
        throw err;
      });
      if (!st) continue;
      if (st.isDirectory()) await walk(full);
      else if (st.isFile()) {
        const path = relative(nativeDir, full).split(sep).join("/");
        if (options.include && !options.include(path)) continue;
        out.push({ path, size: st.size, append_only: options.appendOnly(path) });
      }
    }
  };
  await walk(join(nativeDir, sub));
  return out;
}

export async function readJsonFile<T>(file: string): Promise<T | undefined> {
  try {
    return JSON.parse(await readFile(file, "utf8")) as T;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
}

/** Written to a temporary name and renamed: a crash leaves the old file or the new one, never half of one. */
export async function writeJsonFile(file: string, value: unknown): Promise<void> {
  const tmp = `${file}.tmp`;
  await writeFile(tmp, `${JSON.stringify(value, null, 2)}\n`);
  await rename(tmp, file);
}
