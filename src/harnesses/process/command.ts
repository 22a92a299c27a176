// Command lines from config: split a string the way a user means it, and say clearly when the program or the
// runner script is missing instead of failing later with a bare ENOENT.
import { accessSync, constants, existsSync } from "node:fs";
import { delimiter, isAbsolute, join, resolve } from "node:path";

/** Splits on spaces; single or double quotes group words. No variables, globs or escapes: it is not a shell. */
export function splitCommandLine(line: string): string[] {
  const words: string[] = [];
  const pattern = /"([^"]*)"|'([^']*)'|(\S+)/g;
  for (const match of line.matchAll(pattern)) words.push(match[1] ?? match[2] ?? match[3] ?? "");
  return words;
}

const INTERPRETERS = new Set(["node", "python", "python3", "bun", "deno", "tsx"]);

/** Returns what is missing, in words a user can act on, or undefined when the command looks runnable. */
export function findMissing(
  command: string,
  args: string[],
  cwd: string,
  path = process.env.PATH ?? "",
): string | undefined {
  if (command.includes("/") || command.includes("\\")) {
    const full = isAbsolute(command) ? command : resolve(cwd, command);
    if (!existsSync(full)) return `runner program "${command}" does not exist (looked at ${full})`;
  } else if (!onPath(command, path)) {
    return `runner program "${command}" is not on PATH; install it or give its full path`;
  }
  const base = command.split(/[\\/]/).pop() ?? command;
  const script = args.find((arg) => !arg.startsWith("-"));
  if (INTERPRETERS.has(base) && script && /\.(m?js|cjs|ts|py)$/.test(script)) {
    const full = isAbsolute(script) ? script : resolve(cwd, script);
    if (!existsSync(full))
      return `runner script "${script}" does not exist (looked at ${full}); build it first?`;
  }
  return undefined;
}

function onPath(command: string, path: string): boolean {
  return path.split(delimiter).some((dir) => {
    if (!dir) return false;
    try {
      accessSync(join(dir, command), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}
