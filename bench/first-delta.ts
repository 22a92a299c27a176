// A new session's first delta against a warm session's, through Brain on runners/pi (the fake provider
// streaming a short reply): what a user waits for when a session is new (runner spawn, its imports, `open`)
// beyond what every turn costs.

import { existsSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { Brain } from "../src/core/brain.js";
import { HarnessRegistry } from "../src/core/registry.js";
import type { Session } from "../src/core/session.js";
import { ProcessFactory } from "../src/harnesses/process/factory.js";
import { FsSessionStore } from "../src/store/fs/index.js";
import { startFakeProvider } from "../src/testing/fake-provider/index.js";
import { BuiltinTools } from "../src/tools/builtin.js";
import { ToolRouter } from "../src/tools/router.js";
import { firstDelta } from "./lib/brain.js";
import { makeTemp, removeTemp } from "./lib/cleanup.js";
import { processTicks } from "./lib/load.js";
import { type BenchRow, interleave, log, type Sample, timed, timeRow } from "./lib/measure.js";
import type { BenchOptions } from "./options.js";
import { piRunnerPath, providerFor } from "./pi-turn.js";

const MODEL = "openai/fake-model";
/** 100 ms samples in a row without CPU time that make a spare idle (ticks are 10 ms: one is already work). */
const IDLE_SAMPLES = 3;

/**
 * Waits until the store's spare session directory is made, and the pool holds a spare that has started and warmed
 * (its rehearsal done), so no round runs beside either: on Linux until the spare's CPU time stops growing
 * (unchanged over IDLE_SAMPLES samples 100 ms apart; a fixed wait was not enough on a loaded machine), elsewhere
 * a fixed 2 s.
 */
async function settled(factory: ProcessFactory, store: FsSessionStore): Promise<void> {
  await store.prepareSlot();
  const deadline = Date.now() + 30_000;
  while (factory.sparePids().length === 0) {
    if (Date.now() > deadline) throw new Error("first-delta: the pool never held a spare");
    await sleep(50);
  }
  const [pid] = factory.sparePids();
  if (!existsSync(`/proc/${pid}/stat`)) {
    await sleep(2000);
    return;
  }
  let ticks = processTicks(pid!);
  for (let still = 0; still < IDLE_SAMPLES && Date.now() < deadline; ) {
    await sleep(100);
    const now = processTicks(pid!);
    still = now === ticks ? still + 1 : 0;
    ticks = now;
  }
}

export async function firstDeltaBench(opts: BenchOptions): Promise<BenchRow[]> {
  const reps = opts.reps * 2;
  const fake = await startFakeProvider();
  fake.setFallback(() => ({ text: "ready and listening, what shall we do?", chunkSize: 8 }));
  const home = await makeTemp("first-delta");
  // As `brain serve` keeps it: a session directory made ahead of need.
  const store = new FsSessionStore(home, undefined, undefined, { spareSlot: true });
  // One warm spare (the default, as in `brain serve`): a new session takes it instead of starting a runner.
  const factory = new ProcessFactory({
    name: "pi",
    command: process.execPath,
    args: [piRunnerPath()],
    spares: 1,
  });
  const brain = new Brain({
    store,
    harnesses: new HarnessRegistry([factory]),
    tools: new ToolRouter([new BuiltinTools()]),
    credentials: () => providerFor(fake),
  });
  log(`first-delta: new pi session vs warm one, ${reps} rounds`);
  try {
    const warm = await brain.create({ harness: "pi", config: { model: MODEL } });
    for (let i = 0; i < 3; i++) await firstDelta(warm, "warm up", "first-delta");
    const samples = await interleave("first delta", reps, {
      warm: async (): Promise<Sample> => {
        await settled(factory, store);
        const { seconds, foreign } = await timed(() => firstDelta(warm, "hello", "first-delta"));
        return { value: seconds * 1000, foreign };
      },
      cold: async (): Promise<Sample> => {
        await settled(factory, store);
        const spares = factory.sparePids();
        let session: Session | undefined;
        const { seconds, foreign } = await timed(async () => {
          session = await brain.create({ harness: "pi", config: { model: MODEL } });
          await firstDelta(session, "hello", "first-delta");
        });
        // The spare the new session took is no longer in the pool (the pool starts its replacement).
        const taken = spares.filter((pid) => !factory.sparePids().includes(pid)).length;
        await session?.close();
        return { value: seconds * 1000, foreign, extra: { spare_taken: taken } };
      },
    });
    return [
      timeRow(
        {
          id: "first-delta-new-session",
          what: "runners/pi: first delta of a new session (create → prompt → first delta)",
          unit: "ms",
          baselineWhat: "the same prompt's first delta on a warm session (runner up, opened)",
          notes: [
            "both timed to the first assistant.delta the durable log delivers; the fake provider answers",
            "before each round the store's spare session directory is made, and the pool's spare is up and idle (its CPU time still over 3 samples 100 ms apart; what a pool is for), so neither side runs beside their making",
            "spare_taken: new sessions that took the pool's spare (1 each when the pool is used)",
          ],
        },
        { subject: samples.cold, baseline: samples.warm },
        { kind: "max-ratio", ratio: 1.5 },
      ),
    ];
  } finally {
    await brain.close();
    await fake.close();
    await removeTemp(home);
  }
}
