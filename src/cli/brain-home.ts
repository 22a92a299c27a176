// Where Brain keeps its state, apart from harness-setup.ts so `brain run`'s first step (early-runner.ts) finds
// it without loading the harness catalog.
import { statfsSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { ConfigError } from "./errors.js";

/** $BRAIN_HOME (default ~/.brain); a path there that is not a directory is refused, named, before any mkdir in it. */
export function brainHome(env: NodeJS.ProcessEnv = process.env): string {
  const home = env.BRAIN_HOME ? resolve(env.BRAIN_HOME) : join(homedir(), ".brain");
  let directory = true;
  try {
    directory = statSync(home, { throwIfNoEntry: false })?.isDirectory() ?? true;
  } catch {
    directory = false; // a file on the way (ENOTDIR), or a path Brain may not look into
  }
  if (!directory) {
    const named = env.BRAIN_HOME ? `$BRAIN_HOME (${home})` : `Brain's home ${home} (no $BRAIN_HOME set)`;
    throw new ConfigError(
      `${named} is not a directory: Brain keeps its sessions and tokens there; set BRAIN_HOME to a directory (or a path that does not exist yet), or move that file away`,
    );
  }
  const unmakeable = unmakeableBelow(home);
  if (unmakeable) {
    throw new ConfigError(
      `$BRAIN_HOME (${home}) is on a file system where no directory can be made (${unmakeable}): set BRAIN_HOME to a directory elsewhere`,
    );
  }
  return home;
}

/** statfs's f_type of procfs and sysfs: they make no directory a process asks for. */
const UNMAKEABLE_FILE_SYSTEMS = new Map([
  [0x9fa0, "procfs"],
  [0x62656572, "sysfs"],
]);

/**
 * The file system of a home that does not exist yet, when no directory can be made on it: Node's recursive mkdir
 * never settles below a procfs directory (each ENOENT has it make the parent again), blocking the event loop, so
 * `brain token` with $BRAIN_HOME=/proc/x spun until SIGKILL.
 */
function unmakeableBelow(home: string): string | undefined {
  let existing = home;
  while (!statSync(existing, { throwIfNoEntry: false })) {
    const parent = dirname(existing);
    if (parent === existing) return undefined;
    existing = parent;
  }
  if (existing === home) return undefined;
  try {
    return UNMAKEABLE_FILE_SYSTEMS.get(statfsSync(existing).type);
  } catch {
    return undefined;
  }
}
