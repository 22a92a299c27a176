// Where brain.config.json is: without zod, so `brain run`'s first step (early-runner.ts) reads the very file
// loadConfig validates.
import { resolve } from "node:path";

export const CONFIG_FILE = "brain.config.json";

/** The config file for `--config` (relative to `cwd`), or ./brain.config.json when none is given. */
export function configFile(explicit: string | undefined, cwd: string): string {
  return resolve(cwd, explicit || CONFIG_FILE);
}
