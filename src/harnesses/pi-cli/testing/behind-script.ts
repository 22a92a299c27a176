// The real pi behind a shell script: the script runs some lines of its own (say its pid, write lines on stdout
// first) and then execs pi, so the pid it sees is pi's and what pi writes follows. Tests of what Brain makes of a
// pi that is killed or says more than it knows, on the real program.
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach } from "vitest";
import { tempDir } from "../../../testing/brain.js";
import { type CliBed, cliBed } from "../../../testing/cli.js";
import { piCliCase } from "./case.js";

export interface PiBehindScript {
  /** The script's directory, removed after the test. */
  dir: string;
  bed: CliBed;
}

/**
 * Registers the cleanup (bed closed, directory removed) after each test and returns what starts a bed whose pi is
 * a script in a fresh directory named `prefix…`, running `before(dir)` and then `exec found "$@"`.
 */
export function usePiBehindScript(
  found: string,
): (prefix: string, before: (dir: string) => string) => Promise<PiBehindScript> {
  let dir: string | undefined;
  let bed: CliBed | undefined;
  afterEach(async () => {
    await bed?.close();
    bed = undefined;
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });
  return async (prefix, before) => {
    const made = tempDir(prefix);
    dir = made;
    const bin = join(made, "pi");
    writeFileSync(bin, `#!/bin/sh\n${before(made)}\nexec "${found}" "$@"\n`, { mode: 0o755 });
    bed = await cliBed((launcher) => piCliCase.factory({ launcher, bin }), piCliCase.provider);
    return { dir: made, bed };
  };
}
