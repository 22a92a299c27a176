// SSE fan-out: a runner's event through Brain's daemon (runner → ProcessHarness → Session → durable log with
// group commit → FeedHub → per-watcher coalesced SSE writes → loopback) to W watchers in another process.
//
//   latency     delay from the runner writing a delta to each watcher reading it, at 100 deltas/s, with
//               1, 10 and 100 watchers on one session (target: p99 ≤ 1.3× the plain relay's, each)
//   throughput  deltas delivered per second to 10 watchers while the runner floods
//   slow        10 reading watchers' delivered rate with one watcher that never reads, against none
//
// Baseline for the first two: a plain node:http SSE server fed by the same runner child (bench/lib/raw-sse.ts),
// sending the same event fields. Context for the first: the same relay making each batch durable first
// (group commit, one O_DSYNC write as Brain's log makes), as Brain must: what of Brain's delay the disk accounts for.
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { Brain } from "../src/core/brain.js";
import { HarnessRegistry } from "../src/core/registry.js";
import type { Session } from "../src/core/session.js";
import { ProcessFactory } from "../src/harnesses/process/factory.js";
import { newToken } from "../src/server/auth/tokens.js";
import { type Daemon, startDaemon } from "../src/server/daemon.js";
import { FsSessionStore } from "../src/store/fs/index.js";
import { BuiltinTools } from "../src/tools/builtin.js";
import { ToolRouter } from "../src/tools/router.js";
import { makeTemp, removeTemp, withTimeout } from "./lib/cleanup.js";
import { type BenchRow, interleave, log, rateRow, type Sample, timed, timeRow } from "./lib/measure.js";
import { RawSseRelay } from "./lib/raw-sse.js";
import { spawnViaHost } from "./lib/spawn.js";
import type { BenchOptions } from "./options.js";
import type { WatcherConfig } from "./runners/sse-watchers.js";

export const runnerPath = () => fileURLToPath(new URL("./runners/stamp-runner.js", import.meta.url));
const watchersPath = () => fileURLToPath(new URL("./runners/sse-watchers.js", import.meta.url));

interface WatchResult {
  events: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  firstNs: string;
  lastNs: string;
}

/** Starts the watchers process; resolves once every stream is open, with a promise of its report. */
export async function startWatchers(config: WatcherConfig): Promise<{ result: Promise<WatchResult> }> {
  // From the spawn host: a fork here would fault every page the round's sides write next (bench/lib/spawn.ts).
  // In the bench's own session, as the watchers were when forked from it.
  const child = await spawnViaHost(process.execPath, [watchersPath(), JSON.stringify(config)], false);
  child.stdin.end();
  const lines = createInterface({ input: child.stdout! });
  const next = () =>
    new Promise<Record<string, unknown>>((resolve, reject) => {
      lines.once("line", (line) => resolve(JSON.parse(line) as Record<string, unknown>));
      child.once("exit", (code) => reject(new Error(`watchers exited (${code})`)));
    });
  await withTimeout(next(), 60_000, "watchers connecting");
  return {
    result: withTimeout(next(), 180_000, "watchers finishing") as Promise<unknown> as Promise<WatchResult>,
  };
}

/** Brain's daemon with the stamp runner as harness "stamp", one session warmed up. */
async function brainSide(home: string) {
  const store = new FsSessionStore(home);
  const brain = new Brain({
    store,
    harnesses: new HarnessRegistry([
      new ProcessFactory({ name: "stamp", command: process.execPath, args: [runnerPath()] }),
    ]),
    tools: new ToolRouter([new BuiltinTools()]),
  });
  const token = newToken();
  const daemon: Daemon = await startDaemon({
    brain,
    port: 0,
    tokens: [{ token, tenant: "default", role: "controller" }],
  });
  const caller = { tenant: "default", role: "controller" as const };
  const view = await daemon.sessions.create(caller, { harness: "stamp" });
  const session: Session = await daemon.sessions.live(caller, view.id);
  const run = async (text: string) => {
    const started = await session.prompt(text);
    const outcome = await withTimeout(started.settled, 180_000, `prompt "${text}"`);
    if (outcome.status !== "completed")
      throw new Error(`"${text}" ended ${outcome.status}: ${outcome.error?.message}`);
  };
  await run("paced 20 1000");
  return {
    url: `${daemon.url}/v1/sessions/${view.id}/events`,
    token,
    daemon,
    lastSeq: () => session.log.lastSeq,
    run,
    async close() {
      await daemon.close();
      await brain.close();
    },
  };
}

async function rawSide(dir: string, durable = false) {
  const relay = new RawSseRelay(runnerPath(), dir, durable);
  const url = await relay.listen();
  await relay.prompt("paced 20 1000");
  return {
    url,
    relay,
    lastSeq: () => relay.lastSeq,
    run: (text: string) => relay.prompt(text),
    close: () => relay.close(),
  };
}

type Side = Awaited<ReturnType<typeof brainSide>> | Awaited<ReturnType<typeof rawSide>>;

/** One measured turn: the watchers connect, the prompt runs, the watchers report. */
async function measure(side: Side, prompt: string, watchers: number, paused: number, record: boolean) {
  const token = "token" in side ? side.token : undefined;
  const w = await startWatchers({
    url: side.url,
    ...(token ? { token } : {}),
    watchers,
    paused,
    after: side.lastSeq(),
    record,
  });
  const { foreign, seconds, result } = await timed(async () => {
    await side.run(prompt);
    return w.result;
  });
  return { foreign, seconds, result };
}

export async function sseFanoutBench(opts: BenchOptions): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  const home = await makeTemp("sse-brain");
  const dir = await makeTemp("sse-raw");
  const durableDir = await makeTemp("sse-raw-durable");
  const brain = await brainSide(home);
  const raw = await rawSide(dir);
  const durable = await rawSide(durableDir, true);
  try {
    for (const watchers of [1, 10, 100]) {
      // A round's p99 of 300 delays is its 3rd worst: one disk stall sets it for Brain and the relays alike, and
      // one watcher's rounds ranged 1-7x on that. One watcher gets 1,000 delays per round; more watchers have
      // thousands already.
      const deltas = watchers === 1 ? (opts.quick ? 600 : 1000) : opts.quick ? 200 : 300;
      log(`sse latency: ${deltas} deltas at 100/s to ${watchers} watcher(s), ${opts.reps} rounds`);
      const p50s: Record<string, number[]> = { brain: [], raw: [], durable: [] };
      const sample = (side: Side, name: string) => async (): Promise<Sample> => {
        const { foreign, result } = await measure(side, `paced ${deltas} 100`, watchers, 0, true);
        if (result.events !== deltas * watchers) {
          throw new Error(
            `sse latency ${name}: ${result.events} deltas delivered, ${deltas * watchers} expected`,
          );
        }
        p50s[name]!.push(result.p50Ms);
        return { value: result.p99Ms, foreign, extra: { p50_ms: result.p50Ms, max_ms: result.maxMs } };
      };
      const samples = await interleave(`sse latency ×${watchers}`, opts.reps, {
        baseline: sample(raw, "raw"),
        subject: sample(brain, "brain"),
        durable: sample(durable, "durable"),
      });
      rows.push(
        timeRow(
          {
            id: `sse-latency-${watchers}`,
            what: `SSE delay runner → ${watchers} watcher(s), p99 per round, 100 deltas/s`,
            unit: "ms",
            baselineWhat: "same runner → node:http SSE relay, no log",
            notes: [
              `${deltas} deltas of 200 B per round, ${deltas * watchers} delays; each round's figure is its p99`,
              `p50 per round: Brain ${p50s.brain!.map((v) => v.toFixed(2)).join(", ")} ms; baseline ${p50s.raw!.map((v) => v.toFixed(2)).join(", ")} ms`,
              "Brain's path includes the durable log: a durable write per group commit before any watcher sees an event",
            ],
          },
          samples,
          { kind: "max-ratio", ratio: 1.3 },
        ),
        timeRow(
          {
            id: `sse-latency-durable-${watchers}`,
            what: `SSE delay runner → ${watchers} watcher(s), p99 per round, against a relay that also makes each batch durable (context)`,
            unit: "ms",
            baselineWhat:
              "the same node:http SSE relay making each batch durable as Brain's log does (O_DSYNC write, group commit) before sending",
            notes: [
              `p50 per round: durable relay ${p50s.durable!.map((v) => v.toFixed(2)).join(", ")} ms`,
              "what the durable log costs any relay on this disk: the part of the row above that is not Brain's own",
            ],
          },
          { subject: samples.subject, baseline: samples.durable },
          { kind: "none" },
        ),
      );
    }

    const flood = opts.quick ? 20_000 : 50_000;
    const rate = (side: Side, watchers: number, paused: number) => async (): Promise<Sample> => {
      const { foreign, result } = await measure(side, `flood ${flood}`, watchers, paused, false);
      if (result.events !== flood * watchers) {
        throw new Error(`sse throughput: ${result.events} deltas delivered, ${flood * watchers} expected`);
      }
      const seconds = Number(BigInt(result.lastNs) - BigInt(result.firstNs)) / 1e9;
      return { value: result.events / seconds, foreign };
    };
    log(`sse throughput: ${flood} deltas flooded to 10 watchers, ${opts.reps} rounds`);
    const throughput = await interleave("sse throughput ×10", opts.reps, {
      baseline: rate(raw, 10, 0),
      subject: rate(brain, 10, 0),
    });
    rows.push(
      rateRow(
        {
          id: "sse-throughput",
          what: "SSE deltas delivered per second, 10 watchers, runner flooding",
          unit: "events/s",
          baselineWhat: "same runner → node:http SSE relay, coalesced per tick, no log",
          notes: [
            `${flood} deltas of 200 B per round; from the first delta read to the last, summed over watchers`,
          ],
        },
        throughput,
        { kind: "none" },
      ),
    );

    const slowBefore = brain.daemon.watchers.closed.slow;
    log(`sse slow watcher: ${flood} deltas to 10 reading watchers, with and without one that never reads`);
    const slow = await interleave("sse slow watcher", opts.reps, {
      baseline: rate(brain, 10, 0),
      subject: rate(brain, 10, 1),
    });
    const cut = brain.daemon.watchers.closed.slow - slowBefore;
    rows.push(
      rateRow(
        {
          id: "sse-slow-watcher",
          what: "10 watchers' delivered rate with a watcher that never reads",
          unit: "events/s",
          baselineWhat: "the same 10 watchers, no stalled one",
          notes: [
            "the stalled watcher falls behind at 1 MiB unsent, is then fed only from what it held or the log as its socket drains (never), and is cut off after 30 s without a drain (after the round)",
            `stalled watchers cut off during the rounds: ${cut}`,
          ],
        },
        slow,
        { kind: "min-ratio", ratio: 0.8 },
      ),
    );
  } finally {
    await brain.close();
    await raw.close();
    await durable.close();
    await removeTemp(home);
    await removeTemp(dir);
    await removeTemp(durableDir);
  }
  return rows;
}
