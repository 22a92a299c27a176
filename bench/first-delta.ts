// A new session's first delta against a warm session's, through Brain on runners/pi (the fake provider
// streaming a short reply): what a user waits for when a session is new (runner spawn, its imports, `open`)
// beyond what every turn costs.
import { Brain } from "../src/core/brain.js";
import { HarnessRegistry } from "../src/core/registry.js";
import type { Session } from "../src/core/session.js";
import { ProcessFactory } from "../src/harnesses/process/factory.js";
import { FsSessionStore } from "../src/store/fs/index.js";
import { startFakeProvider } from "../src/testing/fake-provider/index.js";
import { BuiltinTools } from "../src/tools/builtin.js";
import { ToolRouter } from "../src/tools/router.js";
import { makeTemp, removeTemp, withTimeout } from "./lib/cleanup.js";
import { type BenchRow, interleave, log, type Sample, timed, timeRow } from "./lib/measure.js";
import type { BenchOptions } from "./options.js";
import { piRunnerPath, providerFor } from "./pi-turn.js";

const MODEL = "openai/fake-model";

/** Prompts and resolves at the first assistant.delta the log delivers; the turn is then let settle. */
async function firstDelta(session: Session, text: string): Promise<void> {
  let seen: () => void = () => {};
  const delta = new Promise<void>((resolve) => {
    seen = resolve;
  });
  const unsubscribe = session.log.subscribe((batch) => {
    if (batch.some((e) => e.type === "assistant.delta")) seen();
  });
  try {
    const turn = await session.prompt(text);
    await withTimeout(delta, 60_000, "first delta");
    const outcome = await withTimeout(turn.settled, 60_000, "turn");
    if (outcome.status !== "completed") throw new Error(`first-delta: turn ${outcome.status}`);
  } finally {
    unsubscribe();
  }
}

export async function firstDeltaBench(opts: BenchOptions): Promise<BenchRow[]> {
  const reps = opts.reps * 2;
  const fake = await startFakeProvider();
  fake.setFallback(() => ({ text: "ready and listening, what shall we do?", chunkSize: 8 }));
  const home = await makeTemp("first-delta");
  const store = new FsSessionStore(home);
  const brain = new Brain({
    store,
    harnesses: new HarnessRegistry([
      new ProcessFactory({ name: "pi", command: process.execPath, args: [piRunnerPath()] }),
    ]),
    tools: new ToolRouter([new BuiltinTools()]),
    credentials: () => providerFor(fake),
  });
  log(`first-delta: new pi session vs warm one, ${reps} rounds`);
  try {
    const warm = await brain.create({ harness: "pi", config: { model: MODEL } });
    for (let i = 0; i < 3; i++) await firstDelta(warm, "warm up");
    const samples = await interleave("first delta", reps, {
      warm: async (): Promise<Sample> => {
        const { seconds, foreign } = await timed(() => firstDelta(warm, "hello"));
        return { value: seconds * 1000, foreign };
      },
      cold: async (): Promise<Sample> => {
        let session: Session | undefined;
        const { seconds, foreign } = await timed(async () => {
          session = await brain.create({ harness: "pi", config: { model: MODEL } });
          await firstDelta(session, "hello");
        });
        await session?.close();
        return { value: seconds * 1000, foreign };
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
