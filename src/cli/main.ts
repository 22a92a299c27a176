// The `brain` command: a table of subcommands, each in its own module under commands/, loaded on use.
import { ExitKills } from "../core/exit-kills.js";
import type { StartedRunner } from "../harnesses/process/started-runner.js";
import { startEarlyRunner } from "./early-runner.js";
import { errorRedactor } from "./error-redactor.js";
import { ConfigError, describeError, UsageError } from "./errors.js";

export interface CommandModule {
  usage: string;
  /** The verbs a command with subcommands takes (`sessions ls`), each of which answers --help too. */
  verbs?: readonly string[];
  /**
   * `early`: for `run`, the runner spawned before the command loaded (early-runner.ts), to take or discard.
   * `exits`: the process groups to kill as Brain exits, the early runner's and its session's MCP servers'.
   */
  command(args: string[], early?: StartedRunner, exits?: ExitKills): Promise<number>;
}

export const COMMANDS: Record<string, () => Promise<CommandModule>> = {
  run: () => import("./commands/run.js"),
  sessions: () => import("./commands/sessions.js"),
  checkpoint: () => import("./commands/checkpoint.js"),
  restore: () => import("./commands/restore.js"),
  fork: () => import("./commands/fork.js"),
  handoff: () => import("./commands/handoff.js"),
  conformance: () => import("./commands/conformance.js"),
  harnesses: () => import("./commands/harnesses.js"),
  demo: () => import("./commands/demo.js"),
  serve: () => import("./commands/serve.js"),
  token: () => import("./commands/token.js"),
  attach: () => import("./commands/attach.js"),
  acp: () => import("./commands/acp.js"),
  ext: () => import("./commands/ext.js"),
  agents: () => import("./commands/agents.js"),
};

const CONFIG_OPTION =
  "  --config FILE               brain.config.json to use (default: ./brain.config.json if present)\n";

/** A shell's status for a command a Ctrl-C ended (128 + SIGINT), as `brain run` exits when interrupted. */
const EXIT_INTERRUPTED = 130;
/** 128 + SIGTERM. */
const EXIT_TERMINATED = 143;

async function usage(): Promise<string> {
  const lines = await Promise.all(Object.values(COMMANDS).map(async (load) => `  ${(await load()).usage}`));
  return `usage: brain <command> [options]\n\n${lines.join("\n")}\n\n${CONFIG_OPTION}`;
}

/** --help or -h anywhere before a `--` (after it, words belong to another program, as in `conformance --`). */
function asksForHelp(args: string[]): boolean {
  const end = args.indexOf("--");
  return (end < 0 ? args : args.slice(0, end)).some((arg) => arg === "--help" || arg === "-h");
}

export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  // Until `brain run` sets up its own Ctrl-C (once its session is open, so a runner that never answers its open
  // holds that window open), a Ctrl-C would end Brain by the signal, which runs no exit handler: the early runner,
  // in a process group of its own, would live on until the next Brain's start. Leaving by process.exit kills it
  // (StartedRunner's exit handler). Set before the spawn: a runner already running has someone to stop it.
  // SIGTERM (`timeout`, a service manager) likewise.
  const leaveOnSigint = () => {
    if (process.listenerCount("SIGINT") === 1) process.exit(EXIT_INTERRUPTED);
  };
  const leaveOnSigterm = () => {
    if (process.listenerCount("SIGTERM") === 1) process.exit(EXIT_TERMINATED);
  };
  const runs = name === "run" && !asksForHelp(rest);
  if (runs) {
    process.on("SIGINT", leaveOnSigint);
    process.on("SIGTERM", leaveOnSigterm);
  }
  // Before the command's modules (zod, the config schema, the catalog) load: its start overlaps theirs.
  const exits = new ExitKills();
  const early = runs ? startEarlyRunner(rest, undefined, undefined, exits) : undefined;
  try {
    if (name === undefined || name === "help" || name === "--help" || name === "-h") {
      process.stdout.write(await usage());
      return name === undefined ? 2 : 0;
    }
    const load = COMMANDS[name];
    if (!load) throw new UsageError(`unknown command "${name}"`);
    const module = await load();
    if (asksForHelp(rest)) {
      process.stdout.write(`usage: brain ${module.usage}\n\n${CONFIG_OPTION}`);
      return 0;
    }
    return await module.command(rest, early, exits);
  } catch (err) {
    // An error may quote what it was given (an argument, a config value, a server's answer), and stderr ends up
    // in CI logs: the host's secrets are kept out, as the daemon keeps them out of its output.
    const shown = await errorRedactor(rest);
    if (err instanceof UsageError) {
      process.stderr.write(`brain: ${shown.redact(err.message)}\n\n${await usage()}`);
      return 2;
    }
    process.stderr.write(`brain: ${shown.redact(describeError(err))}\n`);
    return err instanceof ConfigError ? 2 : 1;
  } finally {
    process.off("SIGINT", leaveOnSigint);
    process.off("SIGTERM", leaveOnSigterm);
    // Not taken by the session's harness (a bad config, another harness, an error): gone before Brain exits.
    await early?.discard();
  }
}
