// 1. Relay: a runner floods 200-byte assistant.delta frames; Brain's real path (ProcessFactory → Session →
// JsonlEventLog group commit → session.log.subscribe) delivers them to a reader. Baseline: the same runner
// child over the same pipe to a parent that only splits lines (LineSplitter) and JSON.parses them.
import { floodRunnerPath, openBenchSession, watchTurn } from "./lib/brain.js";
import { makeTemp, removeTemp } from "./lib/cleanup.js";
import { type BenchRow, interleave, log, rateRow, type Sample, timed } from "./lib/measure.js";
import { RawHost } from "./lib/raw-host.js";
import type { BenchOptions } from "./options.js";

const WARMUP = 20_000;
/**
 * Untimed rounds of each side before the timed ones. Relay is the first bench of a run, so its first rounds ran
 * Brain's code for the first time in the process: measured, the first two 200 k-delta turns of a fresh process
 * went at 350-470 k and 470-820 k events/s, the later ones at 700 k-1.25 M (the 20 k-delta turn each session
 * opens with does not warm that far). A daemon runs warm; so does the baseline's side, given the same.
 */
const WARM_ROUNDS = 2;

export async function relayBench(opts: BenchOptions): Promise<BenchRow[]> {
  const n = opts.quick ? 100_000 : 200_000;
  const runner = floodRunnerPath();
  log(
    `relay: ${n} deltas of 200 B per run (after a ${WARMUP}-delta warm-up turn), ${opts.reps} rounds after ${WARM_ROUNDS} untimed`,
  );

  const baseline = async (): Promise<Sample> => {
    const dir = await makeTemp("relay-raw");
    const host = new RawHost(runner);
    try {
      await host.open(dir);
      await host.prompt(`flood ${WARMUP}`);
      const { foreign, result } = await timed(() => host.prompt(`flood ${n}`));
      if (result.deltas !== n) throw new Error(`relay baseline: ${result.deltas} deltas arrived, ${n} sent`);
      return { value: n / result.seconds, foreign };
    } finally {
      await host.close();
      await removeTemp(dir);
    }
  };

  const subject = async (): Promise<Sample> => {
    const home = await makeTemp("relay-brain");
    const bench = await openBenchSession(home, `flood ${WARMUP}`);
    try {
      const { foreign, result } = await timed(() => watchTurn(bench.session, `flood ${n}`));
      if (result.deltas !== n) throw new Error(`relay: ${result.deltas} deltas delivered, ${n} sent`);
      const extra = { commits: result.commits, events_per_commit: result.events / result.commits };
      return { value: n / result.seconds, foreign, extra };
    } finally {
      await bench.close();
      await removeTemp(home);
    }
  };

  const samples = await interleave("relay", opts.reps, { baseline, subject }, WARM_ROUNDS);
  return [
    rateRow(
      {
        id: "relay",
        what: "relay 200 B deltas: runner → Brain → durable log → subscriber",
        unit: "events/s",
        baselineWhat: "same runner → pipe → LineSplitter + JSON.parse",
        notes: [
          `${n} deltas per run, timed from session.prompt() to turn.settled delivered (baseline: prompt sent to its reply)`,
          "runner writes 320 frames (64 000 B) per write",
        ],
      },
      samples,
      { kind: "min-ratio", ratio: 0.7 },
    ),
  ];
}
