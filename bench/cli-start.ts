// The CLI's start-up, whole processes: `brain run "hello"` on the echo runner (a fresh $BRAIN_HOME each time)
// and `brain harnesses`, against `node -e 0`, the least a Node command can cost.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { makeTemp, removeTemp, withTimeout } from "./lib/cleanup.js";
import { type BenchRow, interleave, log, type Sample, timed, timeRow } from "./lib/measure.js";
import { userEnv } from "./lib/user-env.js";
import type { BenchOptions } from "./options.js";

/** dist/bench → bin/brain.js */
const brainBin = () => fileURLToPath(new URL("../../bin/brain.js", import.meta.url));

/** Runs a command to its exit; rejects on a non-zero code with its stderr. */
function runToExit(args: string[], env: NodeJS.ProcessEnv, cwd: string): Promise<void> {
  return withTimeout(
    new Promise<void>((resolve, reject) => {
      const child = spawn(process.execPath, args, { cwd, env, stdio: ["ignore", "ignore", "pipe"] });
      let stderr = "";
      child.stderr!.on("data", (c: Buffer) => {
        stderr += c;
      });
      child.on("error", reject);
      child.on("close", (code) =>
        code === 0 ? resolve() : reject(new Error(`${args.join(" ")} exited ${code}: ${stderr.slice(-500)}`)),
      );
    }),
    60_000,
    args.join(" "),
  );
}

export async function cliStartBench(opts: BenchOptions): Promise<BenchRow[]> {
  // `brain harnesses` probes every CLI: seconds per run today, so --quick keeps to the usual rounds.
  const reps = opts.quick ? opts.reps : opts.reps * 2;
  const home = await makeTemp("cli-start-home");
  const cwd = await makeTemp("cli-start-cwd");
  // As a user runs them: not with the daemon's thread pool the bench runs under (lib/user-env.ts).
  const env = { ...userEnv(), BRAIN_HOME: home, BRAIN_URL: "", BRAIN_TOKEN: "" };
  log(`cli-start: brain run "hello", brain harnesses and node -e 0, ${reps} rounds`);
  const sample = (args: string[]) => async (): Promise<Sample> => {
    const { seconds, foreign } = await timed(() => runToExit(args, env, cwd));
    return { value: seconds * 1000, foreign };
  };
  try {
    await runToExit([brainBin(), "run", "hello"], env, cwd); // first run creates the home
    const samples = await interleave("cli-start", reps, {
      node: sample(["-e", "0"]),
      run: sample([brainBin(), "run", "hello"]),
      harnesses: sample([brainBin(), "harnesses"]),
    });
    const baselineWhat = "spawn `node -e 0` until it exits";
    return [
      timeRow(
        {
          id: "cli-run",
          what: '`brain run "hello"` on the echo runner, whole process',
          unit: "ms",
          baselineWhat,
          notes: ["spawn to exit: start-up, session create, the echo runner's start and one turn, shutdown"],
        },
        { subject: samples.run, baseline: samples.node },
        { kind: "max-ratio", ratio: 3 },
      ),
      timeRow(
        {
          id: "cli-harnesses",
          what: "`brain harnesses`, whole process",
          unit: "ms",
          baselineWhat: `${baselineWhat} (context)`,
          notes: ["lists every harness with its CLI's version (each CLI probed)"],
        },
        { subject: samples.harnesses, baseline: samples.node },
        { kind: "max", value: 500, of: "median" },
      ),
    ];
  } finally {
    await removeTemp(home);
    await removeTemp(cwd);
  }
}
