// Scale: 100 sessions streaming at once, 100 deltas/s each, one SSE watcher each (in another process), through
// Brain's daemon with one shared runner host carrying every session; against a plain node:http SSE relay
// carrying the same load from one runner child with as many attachments (bench/lib/raw-sse-hub.ts). Context: the
// same hub making each stream's batches durable first (a file and group commit per stream, as Brain's logs): what
// of Brain's delay the disk accounts for under this load; and the same hub with one journal for all streams: what
// sharing each sync among the sessions would win.

import { availableParallelism } from "node:os";
import { Brain } from "../src/core/brain.js";
import { HarnessRegistry } from "../src/core/registry.js";
import type { Session } from "../src/core/session.js";
import { ProcessFactory } from "../src/harnesses/process/factory.js";
import { newToken } from "../src/server/auth/tokens.js";
import { startDaemon } from "../src/server/daemon.js";
import { FsSessionStore } from "../src/store/fs/index.js";
import { BuiltinTools } from "../src/tools/builtin.js";
import { ToolRouter } from "../src/tools/router.js";
import { makeTemp, removeTemp, withTimeout } from "./lib/cleanup.js";
import { startMachineProbe } from "./lib/load.js";
import { type BenchRow, interleave, log, type Sample, timed, timeRow } from "./lib/measure.js";
import { type HubDurability, RawSseHub } from "./lib/raw-sse-hub.js";
import { median } from "./lib/stats.js";
import { benchStoreOptions } from "./lib/store-options.js";
import type { BenchOptions } from "./options.js";
import { runnerPath, startWatchers } from "./sse-fanout.js";

const SESSIONS = 100;
const HZ = 100;

async function brainSide(home: string) {
  const store = new FsSessionStore(home, undefined, undefined, benchStoreOptions());
  const brain = new Brain({
    store,
    harnesses: new HarnessRegistry([
      new ProcessFactory({ name: "stamp", command: process.execPath, args: [runnerPath()], shared: true }),
    ]),
    tools: new ToolRouter([new BuiltinTools()]),
  });
  const token = newToken();
  const daemon = await startDaemon({
    brain,
    port: 0,
    tokens: [{ token, tenant: "default", role: "controller" }],
  });
  const caller = { tenant: "default", role: "controller" as const };
  const sessions: Session[] = [];
  const urls: string[] = [];
  for (let i = 0; i < SESSIONS; i++) {
    const view = await daemon.sessions.create(caller, { harness: "stamp" });
    sessions.push(await daemon.sessions.live(caller, view.id));
    urls.push(`${daemon.url}/v1/sessions/${view.id}/events`);
  }
  const runAll = async (text: string) => {
    const turns = await Promise.all(sessions.map((s) => s.prompt(text)));
    const outcomes = await withTimeout(Promise.all(turns.map((t) => t.settled)), 180_000, `"${text}" ×100`);
    const bad = outcomes.find((o) => o.status !== "completed");
    if (bad) throw new Error(`sse-load: a turn ended ${bad.status}: ${bad.error?.message}`);
  };
  await runAll("paced 2 1000");
  return {
    urls,
    token,
    lastSeqs: () => sessions.map((s) => s.log.lastSeq),
    runAll,
    async close() {
      await daemon.close();
      await brain.close();
    },
  };
}

export async function sseLoadBench(opts: BenchOptions): Promise<BenchRow[]> {
  const deltas = opts.quick ? 100 : 300;
  const home = await makeTemp("sse-load-brain");
  log(`sse-load: ${SESSIONS} sessions × ${deltas} deltas at ${HZ}/s, one watcher each, ${opts.reps} rounds`);
  const brain = await brainSide(home);
  // Filled as each starts, so the cleanup below closes exactly those that did.
  const hubs: Partial<Record<HubDurability, { hub: RawSseHub; urls: string[]; dir: string }>> = {};
  try {
    for (const durability of ["none", "per-stream", "journal"] as const) {
      const dir = await makeTemp(`sse-load-${durability}`);
      const hub = new RawSseHub(runnerPath(), dir, SESSIONS, durability);
      hubs[durability] = { hub, urls: await hub.listen(), dir };
      await hub.promptAll("paced 2 1000");
    }
    const round =
      (
        urls: string[],
        afters: () => number[],
        run: (text: string) => Promise<void>,
        token: string | undefined,
      ) =>
      async (): Promise<Sample> => {
        const w = await startWatchers({
          url: urls[0]!,
          urls,
          afters: afters(),
          ...(token ? { token } : {}),
          watchers: 1,
          paused: 0,
          after: 0,
          record: true,
        });
        const machine = startMachineProbe();
        const { foreign, result } = await timed(async () => {
          await run(`paced ${deltas} ${HZ}`);
          return w.result;
        });
        const machineCores = machine.stop();
        if (result.events !== deltas * SESSIONS) {
          throw new Error(`sse-load: ${result.events} deltas delivered, ${deltas * SESSIONS} expected`);
        }
        const extra = { p50_ms: result.p50Ms, max_ms: result.maxMs, machine_cores: machineCores };
        return { value: result.p99Ms, foreign, extra };
      };
    const hubRound = (durability: HubDurability) => {
      const { hub, urls } = hubs[durability]!;
      return round(
        urls,
        () => hub.lastSeqs(),
        (text) => hub.promptAll(text),
        undefined,
      );
    };
    const samples = await interleave("sse-load ×100", opts.reps, {
      baseline: hubRound("none"),
      subject: round(brain.urls, brain.lastSeqs, brain.runAll, brain.token),
      durable: hubRound("per-stream"),
      journal: hubRound("journal"),
    });
    const what = `${SESSIONS} sessions streaming ${HZ} deltas/s each, one SSE watcher each: delay p99`;
    // The whole machine's CPU during each side's rounds: what durability costs this load before any delay does.
    const cores = (side: Sample[]) =>
      median(side.map((s) => s.extra?.machine_cores ?? Number.NaN)).toFixed(2);
    const machine =
      `machine CPU during a round (median, in cores of ${availableParallelism()}, the kernel's work included): ` +
      `plain relay ${cores(samples.baseline)}, durable relay ${cores(samples.durable)}, ` +
      `journal relay ${cores(samples.journal)}, Brain ${cores(samples.subject)}`;
    const p99 = (side: Sample[]) => median(side.map((s) => s.value));
    const journalVsPlain =
      `the journal relay itself: p99 ${p99(samples.journal).toFixed(1)} ms, ` +
      `${(p99(samples.journal) / p99(samples.baseline)).toFixed(2)}× the plain relay's (medians of the rounds)`;
    return [
      timeRow(
        {
          id: "sse-load-100",
          what,
          unit: "ms",
          baselineWhat: "plain node:http SSE relay, one runner child with 100 attachments, same load, no log",
          notes: [
            `${deltas} deltas of 200 B per session per round; each round's figure is the p99 of all ${deltas * SESSIONS} delays`,
            "Brain: one shared runner host (shared: true) carrying the 100 sessions, each with its own durable log",
            machine,
          ],
        },
        { subject: samples.subject, baseline: samples.baseline },
        { kind: "max-ratio", ratio: 1.5 },
      ),
      timeRow(
        {
          id: "sse-load-100-durable",
          what: `${what}, vs the durable relay`,
          unit: "ms",
          baselineWhat:
            "the same plain relay, each stream's batch made durable in a file of its own as Brain's log does (O_DSYNC write) before it is sent",
          notes: ["context: what the disk costs this load with nothing of Brain in the way", machine],
        },
        { subject: samples.subject, baseline: samples.durable },
        { kind: "none" },
      ),
      timeRow(
        {
          id: "sse-load-100-journal",
          what: `${what}, vs a relay with one journal for all streams`,
          unit: "ms",
          baselineWhat:
            "the same plain relay, every stream's pending batch made durable together in one file (O_DSYNC write) before it is sent",
          notes: [
            "context: what sharing each sync among the sessions (a store-wide journal, which Brain does not have) wins under this load",
            journalVsPlain,
            machine,
          ],
        },
        { subject: samples.subject, baseline: samples.journal },
        { kind: "none" },
      ),
    ];
  } finally {
    await brain.close();
    await removeTemp(home);
    for (const { hub, dir } of Object.values(hubs)) {
      await hub.close();
      await removeTemp(dir);
    }
  }
}
