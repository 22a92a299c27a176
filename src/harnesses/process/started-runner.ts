// How a runner process is spawned, in one place: RunnerProcess spawns through it, and `brain run` spawns its
// runner through it before the config is validated (src/cli/early-runner.ts), so both children get the same
// minimal environment, working directory and process group. Imports nothing but Node's own modules and the
// environment rules: the early path runs before zod and the harness catalog load.
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { ExitKills } from "../../core/exit-kills.js";
import { minimalEnvironment } from "./environment.js";
import type { SpawnRecords } from "./spawn-records.js";

/** What starts a runner: its program, arguments, working directory and the variables its entry adds. */
export interface RunnerLaunch {
  command: string;
  args: string[];
  /** Added to the minimal environment. */
  env?: Record<string, string>;
  cwd?: string;
}

export function spawnRunner(launch: RunnerLaunch): ChildProcessWithoutNullStreams {
  return spawn(launch.command, launch.args, {
    cwd: launch.cwd,
    env: minimalEnvironment(process.env, launch.env),
    stdio: ["pipe", "pipe", "pipe"],
    // Its own process group: a kill reaches what the runner started too, and Ctrl-C at Brain's terminal does
    // not hit the runner behind Brain's back (Brain interrupts the turn itself).
    detached: true,
  });
}

function sameLaunch(a: RunnerLaunch, b: RunnerLaunch): boolean {
  const env = (l: RunnerLaunch) => JSON.stringify(Object.entries(l.env ?? {}).sort());
  return (
    a.command === b.command &&
    a.args.length === b.args.length &&
    a.args.every((arg, i) => arg === b.args[i]) &&
    (a.cwd ?? "") === (b.cwd ?? "") &&
    env(a) === env(b)
  );
}

/**
 * A runner spawned before anyone could say it is wanted: the validated path claims it only when its own harness
 * would spawn exactly this launch, and otherwise it is discarded (killed with its group, its exit awaited).
 */
export class StartedRunner {
  private child: ChildProcessWithoutNullStreams | undefined;
  private readonly exited: Promise<void>;

  /**
   * `records`: where its group is written down while its leader runs. Forked from Brain itself, it has no spawn
   * host to stop its group when Brain dies: Brain kills it as it exits, and when Brain is killed, the next Brain
   * on this home stops it (spawn-records.ts). `exits`: Brain's, which kills its group as Brain exits.
   */
  constructor(
    readonly launch: RunnerLaunch,
    child: ChildProcessWithoutNullStreams,
    records?: SpawnRecords,
    exits = new ExitKills(),
  ) {
    this.child = child;
    const pid = child.pid;
    if (pid !== undefined) {
      records?.add(pid);
      // Brain leaving at once stops nothing gracefully, and its group outlived it (a tool's process): killed as
      // Brain exits, as a spawn host would have.
      const forget = exits.add(pid);
      child.once("exit", () => {
        forget();
        records?.remove(pid);
      });
    }
    // Nothing reads the child until it is claimed; its streams stay paused, so no output is lost meanwhile.
    this.exited = new Promise((resolve) => child.once("exit", () => resolve()));
    // EPIPE or a late failure before a claim: the claimant (RunnerProcess) reports the exit itself.
    child.stdin.on("error", () => {});
  }

  /** The child's pid while it is unclaimed (for tests and diagnostics). */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** The child, once, when `launch` is the one it was started with; undefined otherwise. */
  claim(launch: RunnerLaunch): ChildProcessWithoutNullStreams | undefined {
    if (!this.child || !sameLaunch(this.launch, launch)) return undefined;
    const child = this.child;
    this.child = undefined;
    return child;
  }

  /** Kills an unclaimed child's group and waits for its exit; nothing once claimed. Safe to call again. */
  async discard(): Promise<void> {
    const child = this.child;
    if (!child) return;
    this.child = undefined;
    if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) {
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {
        child.kill("SIGKILL");
      }
    }
    if (child.exitCode === null && child.signalCode === null) await this.exited;
    child.stdin.destroy();
    child.stdout.destroy();
    child.stderr.destroy();
  }
}
