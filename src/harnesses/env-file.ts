// A container's variables in a file the docker CLI reads (`--env-file`), not in its argv (`-e NAME=VALUE` is in
// every local user's process listing) nor in its own environment (`-e NAME`, where a DOCKER_* variable would also
// steer docker itself). The file is 0600 in a 0700 directory of its own, and removed as soon as docker has read it.
// A writer killed before it could remove one (a SIGKILLed exec shim) leaves the values on disk: the directory is
// named for its writer (tempName), and the next writer removes those whose writer is gone.
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { removeDeadTempsSync, tempName } from "../core/checkpoints/temps.js";
import { HarnessError } from "../core/harness.js";

const PREFIX = "brain-env.";

/** docker reads the file with a line scanner whose lines (without their `\n`) hold at most this many bytes. */
export const MAX_ENV_LINE_BYTES = 65_535;

/**
 * The file's text, one `NAME=VALUE` a line, as docker parses it (opts/envfile.go): a value passes through
 * untouched but cannot hold a line break (nor end in `\r`, which the scanner drops), and a name that is empty,
 * holds `=` or white space, or starts with `#` (a comment) cannot be said at all. Each is refused by name.
 */
export function envFileText(env: Record<string, string>, harness: string): string {
  const refuse = (name: string, why: string) =>
    new HarnessError(
      "brain_error",
      `harness "${harness}": the variable ${JSON.stringify(name)} cannot be passed to the container: ${why}`,
    );
  const lines = Object.entries(env).map(([name, value]) => {
    if (!name || /[=\s\0]/.test(name) || name.startsWith("#")) {
      throw refuse(
        name,
        "a name must be non-empty, without '=' or white space, and not start with '#'; rename it",
      );
    }
    if (/[\n\r\0]/.test(value)) {
      throw refuse(
        name,
        "its value holds a line break (or NUL), which docker's --env-file cannot carry; pass it without (e.g. base64-encoded) or in a mounted file",
      );
    }
    const line = `${name}=${value}`;
    if (Buffer.byteLength(line) > MAX_ENV_LINE_BYTES) {
      throw refuse(
        name,
        `NAME=VALUE is ${Buffer.byteLength(line)} bytes, more than docker's --env-file reads in one line (${MAX_ENV_LINE_BYTES}); pass a large value in a mounted file`,
      );
    }
    return `${line}\n`;
  });
  return lines.join("");
}

/** Writes the file (refusing what it cannot carry, above); `remove` deletes it and its directory. */
export function writeEnvFile(env: Record<string, string>, harness: string): { path: string; remove(): void } {
  const text = envFileText(env, harness);
  let dir: string | undefined;
  try {
    removeDeadTempsSync(tmpdir(), PREFIX);
    // mkdir fails on anything already at the name (a planted link included); the file is made 0600, new.
    const made = join(tmpdir(), `${PREFIX}${tempName("tmp")}`);
    mkdirSync(made, { mode: 0o700 });
    dir = made;
    const path = join(dir, "env");
    writeFileSync(path, text, { mode: 0o600, flag: "wx" });
    return { path, remove: () => rmSync(made, { recursive: true, force: true }) };
  } catch (err) {
    if (dir) rmSync(dir, { recursive: true, force: true });
    throw new HarnessError(
      "brain_error",
      `harness "${harness}": could not write the container's variables to a file in ${tmpdir()}: ${(err as Error).message} (free space there, or point TMPDIR elsewhere)`,
    );
  }
}
