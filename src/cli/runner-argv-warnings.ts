// A runner's command line (brain.config.json `harnesses.NAME.command`) is its process's argv, which every local
// user can read (ps, /proc/PID/cmdline). A credential written there works, so Brain starts the runner as before and
// says so as the config loads, on stderr, where every start says what it must (setup.ts).
import { argvCredentialWarnings } from "../core/credentials.js";
import { splitCommandLine } from "../harnesses/process/command.js";
import type { LoadedConfig } from "./config.js";

/** One line for each runner argument that holds a credential, naming the runner and the argument. */
export function runnerArgvWarnings(loaded: LoadedConfig): string[] {
  return Object.entries(loaded.config.harnesses ?? {}).flatMap(([name, entry]) => {
    const words = typeof entry.command === "string" ? splitCommandLine(entry.command) : entry.command;
    return argvCredentialWarnings(
      words,
      {},
      `harnesses.${name}.command`,
      `Brain starts runner "${name}" with it. Give it in harnesses.${name}.env instead (a variable the runner reads), or in a file only you can read`,
    );
  });
}
