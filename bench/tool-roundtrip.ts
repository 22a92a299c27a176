// 2. Tool round trip: the runner issues reverse tool.calls of the built-in echo tool; Brain checks the call is
// bound, logs tool.call durably, dispatches, logs tool.result and answers. Baseline: the same runner over the
// same pipe to a parent that answers each call at once. Context: the "durable floor", the same raw parent but
// writing each read's tool.call lines (after the results it sent since the last write, as Brain logs them) to a
// file + one fdatasync before answering, and (sequential only) the same with a second fdatasync of the results
// before they are sent: the floor if a result had to be durable before the runner sees it (Brain does not wait
// for that: it sends the result at once, and the result's commit rides with the runner's next call). The runner
// times first call → last result itself, identically on every side.
//
// Warm-up: every side gets a fresh runner child, and a fresh child's JIT ramps for thousands of calls (measured:
// after one 1,000-call warm-up, the raw pipe's next 4,000-call run went at about half the rate of the runs after
// it, and Brain's likewise), so a single timed run after a short warm-up measured mostly the runner warming up,
// on both sides. Every side runs the timed prompt itself WARM_RUNS times, untimed, before its timed runs: the
// same calls, on the same kind of child, whatever the side.
//
// Rounds: each side's host (its runner child; Brain's session and log; the floor's file) is started and warmed
// once and kept for all its timed runs, which alternate with the other sides' back to back. A timed run lasts
// well under a second, while this disk's sync speed drifts over seconds: with a fresh host per round, each
// round's several seconds of start-up and warm-up stood between the two runs of a pair, and the floor's rate
// alone spread 1.0-2.65 k RT/s within one run. Kept hosts put a pair's runs next to each other, and the time
// saved buys three times as many pairs for the median.
import path from "node:path";
import { floodRunnerPath, openBenchSession, watchTurn } from "./lib/brain.js";
import { makeTemp, removeTemp, watched } from "./lib/cleanup.js";
import { type BenchRow, interleave, log, rateRow, type Sample, timed } from "./lib/measure.js";
import { RawHost } from "./lib/raw-host.js";
import type { BenchOptions } from "./options.js";

interface RunnerTiming {
  ns: number;
  calls: number;
  errors: number;
}

function timing(message: string | undefined, k: number, side: string): RunnerTiming {
  const t = JSON.parse(message ?? "{}") as Partial<RunnerTiming>;
  if (t.calls !== k || typeof t.ns !== "number") throw new Error(`${side}: bad runner report ${message}`);
  if (t.errors !== 0) throw new Error(`${side}: ${t.errors} of ${k} echo results were wrong or errors`);
  return t as RunnerTiming;
}

/** Untimed runs of the timed prompt itself before the timed ones, on every side alike (see the header). */
const WARM_RUNS = 3;
/** Timed runs per requested rep: each is short, and the disk's speed drifts between them (see the header). */
const ROUNDS_PER_REP = 3;

/**
 * What the watchdogs allow (see watched): a side's start, and each call at 40 round trips/s, far below any side's
 * rate even on a loaded machine (thousands/s in flight, hundreds/s sequential), so only a hang reaches them.
 */
const START_MS = 30_000;
const PER_CALL_MS = 25;
const WARMUP_CALLS = 1_000;

/** Each side's start and warm-up: WARMUP_CALLS, then WARM_RUNS runs of the timed prompt. */
const warmMs = (k: number) => START_MS + (WARMUP_CALLS + WARM_RUNS * k) * PER_CALL_MS;
/** One timed run of `k` calls. */
const runMs = (k: number) => START_MS / 6 + k * PER_CALL_MS;

/** The calls each in-flight count's rows time per run. */
const callsOf = (opts: Pick<BenchOptions, "quick">) =>
  [
    [1, opts.quick ? 600 : 1_000],
    [32, opts.quick ? 4_000 : 8_000],
  ] as const;

/**
 * What the whole section may take: every side's start and warm-up, and every round's runs, at the watchdogs'
 * rates, each side closed within a start's time. Each step has its own watchdog, which names it: this one is
 * for what falls between them.
 */
export function toolRoundTripBudgetMs(opts: BenchOptions): number {
  let ms = 0;
  for (const [inFlight, k] of callsOf(opts)) {
    const sides = inFlight === 1 ? 4 : 3;
    ms += sides * (warmMs(k) + START_MS + opts.reps * ROUNDS_PER_REP * runMs(k));
  }
  return ms;
}

/** A side warmed once and kept for every round: `run` times one turn of `k` calls. */
interface Side {
  run(): Promise<Sample>;
  close(): Promise<void>;
}

/** Runs `warm`; if it fails, closes what was opened before passing the failure on. */
async function warmed(close: () => Promise<void>, warm: () => Promise<void>): Promise<void> {
  try {
    await warm();
  } catch (err) {
    await close().catch(() => {});
    throw err;
  }
}

async function roundTrips(opts: BenchOptions, inFlight: number, k: number): Promise<BenchRow[]> {
  const runner = floodRunnerPath();
  const prompt = `tools ${k} ${inFlight}`;
  const warmup = `tools ${WARMUP_CALLS} ${inFlight}`;
  log(
    `tools: ${k} echo round trips, ${inFlight} in flight, ${opts.reps * ROUNDS_PER_REP} rounds (after a 1,000-call and ${WARM_RUNS} × ${k}-call warm-up of each side, once)`,
  );

  const raw = async (durable: boolean, resultSyncs = false): Promise<Side> => {
    const dir = await makeTemp("tools-raw");
    const host = new RawHost(
      runner,
      durable ? { durableLog: path.join(dir, "calls.jsonl"), resultSyncs } : {},
    );
    const close = async () => {
      await host.close();
      await removeTemp(dir);
    };
    await warmed(close, async () => {
      await host.open(dir);
      await host.prompt(warmup);
      for (let i = 0; i < WARM_RUNS; i++) await host.prompt(prompt);
    });
    const run = async (): Promise<Sample> => {
      const { foreign, result } = await timed(() => host.prompt(prompt));
      const t = timing(result.message, k, "tool baseline");
      if (result.toolCalls !== k)
        throw new Error(`tool baseline: ${result.toolCalls} calls seen, ${k} expected`);
      return { value: k / (t.ns / 1e9), foreign };
    };
    return { run, close };
  };

  const subject = async (): Promise<Side> => {
    const home = await makeTemp("tools-brain");
    const bench = await openBenchSession(home, warmup);
    const close = async () => {
      await bench.close();
      await removeTemp(home);
    };
    await warmed(close, async () => {
      for (let i = 0; i < WARM_RUNS; i++) await watchTurn(bench.session, prompt);
    });
    const run = async (): Promise<Sample> => {
      const { foreign, result } = await timed(() => watchTurn(bench.session, prompt));
      const t = timing(result.message, k, "tool round trip");
      if (result.toolCalls !== k || result.toolResults !== k) {
        throw new Error(
          `tool round trip: ${result.toolCalls} tool.call / ${result.toolResults} tool.result logged, ${k} expected`,
        );
      }
      // Commits over the timed turn include the 3 of user.prompt/turn.started, assistant.message, turn.settled.
      return { value: k / (t.ns / 1e9), foreign, extra: { commits_per_round_trip: result.commits / k } };
    };
    return { run, close };
  };

  const open: Record<string, () => Promise<Side>> = {
    baseline: () => raw(false),
    subject,
    durable: () => raw(true),
  };
  if (inFlight === 1) open.durable2 = () => raw(true, true);
  const sides: Side[] = [];
  const runs: Record<string, () => Promise<Sample>> = {};
  let samples: Record<"baseline" | "subject" | "durable", Sample[]> & { durable2?: Sample[] };
  try {
    for (const [name, start] of Object.entries(open)) {
      const step = `tools×${inFlight}: the ${name} side's start and warm-up`;
      const side = await watched(step, warmMs(k), start);
      sides.push(side);
      let round = 0;
      runs[name] = () => {
        const what = `tools×${inFlight}: the ${name} side's timed run ${++round} (${k} calls)`;
        return watched(what, runMs(k), side.run);
      };
    }
    samples = (await interleave(`tools×${inFlight}`, opts.reps * ROUNDS_PER_REP, runs)) as typeof samples;
  } finally {
    for (const side of sides) await side.close();
  }
  const notes =
    inFlight === 1
      ? [
          "sequential: each call's tool.call is durable (fdatasync) before dispatch, so every round trip pays a commit",
        ]
      : [`${inFlight} in flight: the tool.call appends of concurrent calls share group commits`];
  notes.push(
    `${k} round trips of 200-byte tool.call frames per run, timed by the runner (first call → last result); ${opts.reps * ROUNDS_PER_REP} runs per side, each side's host (runner, session, log) started and warmed once (${WARM_RUNS} untimed runs of the same), then kept for every run`,
  );
  const id = inFlight === 1 ? "tool-rt-seq" : `tool-rt-${inFlight}`;
  const what = `tool round trip (echo), ${inFlight === 1 ? "sequential" : `${inFlight} in flight`}`;
  return [
    rateRow(
      { id, what, unit: "RT/s", baselineWhat: "same runner → pipe → parent answers at once", notes },
      { subject: samples.subject, baseline: samples.baseline },
      // Issue 12: 32 in flight against the raw pipe; the sequential row's target is on the durable floor.
      inFlight === 1 ? { kind: "none" } : { kind: "min-ratio", ratio: 0.6 },
    ),
    rateRow(
      {
        id: `${id}-durable-floor`,
        what: `${what}, vs the durable floor`,
        unit: "RT/s",
        baselineWhat:
          "same raw parent + writeSync of the results sent since and each read's tool.call lines + one fdatasync, then answers",
        notes: ["what logging each call durably before answering costs with nothing else in the way"],
      },
      { subject: samples.subject, baseline: samples.durable },
      inFlight === 1 ? { kind: "min-ratio", ratio: 0.85 } : { kind: "none" },
    ),
    ...(samples.durable2
      ? [
          rateRow(
            {
              id: `${id}-two-syncs-floor`,
              what: `${what}, vs a floor that also makes each result durable before sending it`,
              unit: "RT/s",
              baselineWhat:
                "same raw parent: call lines + fdatasync, then result lines + fdatasync, then answers",
              notes: [
                "context: two fdatasyncs per round trip, the least a host must do if a result must be durable before the runner sees it",
              ],
            },
            { subject: samples.subject, baseline: samples.durable2 },
            { kind: "none" },
          ),
        ]
      : []),
  ];
}

export async function toolRoundTripBench(opts: BenchOptions): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  for (const [inFlight, k] of callsOf(opts)) rows.push(...(await roundTrips(opts, inFlight, k)));
  return rows;
}
