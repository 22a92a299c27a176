// Shared by this folder's tests: temp dirs and small file helpers. No vitest import: this file is built too.
import { spawn } from "node:child_process";
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";

/** `make()` gives a fresh temp dir; `cleanup()` (registered with afterEach) removes them all. */
export function tempDirs() {
  const made: string[] = [];
  return {
    async make(): Promise<string> {
      const dir = await mkdtemp(path.join(os.tmpdir(), "brain-ckpt-"));
      made.push(dir);
      return dir;
    },
    async cleanup(): Promise<void> {
      await Promise.all(made.splice(0).map((d) => rm(d, { recursive: true, force: true })));
    },
  };
}

export async function put(root: string, rel: string, data: string | Buffer): Promise<void> {
  const file = path.join(root, rel);
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, data);
}

export async function native(root: string, rel: string, appendOnly = false) {
  return { path: rel, size: (await stat(path.join(root, rel))).size, append_only: appendOnly };
}

export async function dirBytes(dir: string): Promise<number> {
  let total = 0;
  for (const name of await readdir(dir).catch(() => [])) total += (await stat(path.join(dir, name))).size;
  return total;
}

export const read = (root: string, rel: string) => readFile(path.join(root, rel));

/** The pid of a process killed with SIGKILL (and reaped): what a writer killed mid-write was. */
export async function killedPid(): Promise<number> {
  const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" });
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGKILL");
  await exited;
  return child.pid!;
}
