// Where Brain keeps its state, apart from harness-setup.ts so `brain run`'s first step (early-runner.ts) finds
// it without loading the harness catalog.
import { statSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
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
  return home;
}
