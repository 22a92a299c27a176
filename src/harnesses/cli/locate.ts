// Finding a CLI agent's program: an explicit path from the config, else the project's node_modules/.bin (where
// the pinned versions are installed), else the caller's node_modules/.bin, else PATH.
import { execFile } from "node:child_process";
import { accessSync, constants, readFileSync, realpathSync } from "node:fs";
import { delimiter, dirname, isAbsolute, join, resolve } from "node:path";
import { installRoot } from "../../core/install-root.js";

function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

export interface LocateOptions {
  /** An explicit program: a path (absolute, or relative to cwd) or a bare name looked up like the default. */
  bin?: string;
  cwd?: string;
  path?: string;
}

/** Every place looked at, in order: for the "not found" message. */
export function searchPlaces(program: string, opts: LocateOptions = {}): string[] {
  const cwd = opts.cwd ?? process.cwd();
  const dirs = [join(installRoot(), "node_modules/.bin"), join(cwd, "node_modules/.bin")];
  const pathDirs = (opts.path ?? process.env.PATH ?? "").split(delimiter).filter(Boolean);
  return [...new Set([...dirs, ...pathDirs])].map((dir) => join(dir, program));
}

/** The absolute path of the program, or undefined when it is nowhere to be found. */
export function locateCli(program: string, opts: LocateOptions = {}): string | undefined {
  const name = opts.bin ?? program;
  if (name.includes("/")) {
    const full = isAbsolute(name) ? name : resolve(opts.cwd ?? process.cwd(), name);
    return executable(full) ? full : undefined;
  }
  return searchPlaces(name, opts).find(executable);
}

/**
 * `<program> --version` (behind `launcher`, if any), reduced to the version number; undefined when it does not
 * answer in time.
 */
export function cliVersion(
  file: string,
  launcher: string[] = [],
  timeoutMs = 30_000,
): Promise<string | undefined> {
  const [command, ...args] = [...launcher, file, "--version"];
  return new Promise((resolveVersion) => {
    execFile(command!, args, { timeout: timeoutMs, encoding: "utf8" }, (err, stdout, stderr) => {
      const text = `${stdout ?? ""}\n${stderr ?? ""}`;
      const match = /\d+\.\d+\.\d+[\w.+-]*/.exec(text);
      resolveVersion(match ? match[0] : err ? undefined : text.trim().split("\n")[0] || undefined);
    });
  });
}

/**
 * The version in the manifest of the npm package `name` that holds `program` (found walking up from its real
 * path): an installed CLI's version without starting it, which costs seconds for some (and an ACP agent started
 * with `--version` may start serving on stdio instead). Undefined when the program is no part of that package.
 */
export function manifestVersion(program: string, name: string): string | undefined {
  let dir: string;
  try {
    dir = dirname(realpathSync(program));
  } catch {
    return undefined;
  }
  for (;;) {
    try {
      const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
      if (manifest?.name === name && typeof manifest.version === "string") return manifest.version;
    } catch {}
    const up = dirname(dir);
    if (up === dir) return undefined;
    dir = up;
  }
}
