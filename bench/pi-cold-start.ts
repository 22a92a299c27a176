// 6. Runner cold start: spawning runners/pi until its `open` is answered (Node start, pi-agent-core + pi-ai
// import, the SDK, reading the native dir), and until its first turn is answered (the provider code pi-ai
// loads on first use, the first request). Baseline: spawning `node -e 0` until it exits. Context: the echo
// runner, on the same SDK without pi, until its `open` is answered.
import { fileURLToPath } from "node:url";
import { startFakeProvider } from "../src/testing/fake-provider/index.js";
import { makeTemp, removeTemp, spawnTracked } from "./lib/cleanup.js";
import { type BenchRow, interleave, log, type Sample, timed, timeRow } from "./lib/measure.js";
import type { BenchOptions } from "./options.js";
import { PiStdio, piRunnerPath } from "./pi-turn.js";

/** dist/bench → dist/runners/echo/main.js */
function echoRunnerPath(): string {
  return fileURLToPath(new URL("../runners/echo/main.js", import.meta.url));
}

const ms = (seconds: number) => seconds * 1000;

export async function piColdStartBench(opts: BenchOptions): Promise<BenchRow[]> {
  // Each start is short, so take twice the usual rounds.
  const reps = opts.reps * 2;
  const fake = await startFakeProvider();
  fake.setFallback(() => ({ text: "ready" }));
  log(`pi-cold-start: ${reps} rounds`);

  const nodeOnly = async (): Promise<Sample> => {
    const { seconds, foreign } = await timed(async () => {
      const child = spawnTracked(process.execPath, ["-e", "0"], { stdio: "ignore" });
      await new Promise((resolve) => child.on("close", resolve));
    });
    return { value: ms(seconds), foreign };
  };

  const start = (script: string, firstTurn: boolean) => async (): Promise<Sample> => {
    const dir = await makeTemp("pi-cold");
    let runner: PiStdio | undefined;
    try {
      const { seconds, foreign } = await timed(async () => {
        runner = new PiStdio(process.execPath, [script]);
        await runner.open(dir, { base_url: `${fake.url}/v1`, api: "openai-completions" });
        if (firstTurn) await runner.prompt("Are you there?");
      });
      return { value: ms(seconds), foreign };
    } finally {
      await runner?.close();
      await removeTemp(dir);
    }
  };

  try {
    const samples = await interleave("cold start", reps, {
      node: nodeOnly,
      pi: start(piRunnerPath(), false),
      piTurn: start(piRunnerPath(), true),
      echo: start(echoRunnerPath(), false),
    });
    const baselineWhat = "spawn `node -e 0` until it exits";
    return [
      timeRow(
        {
          id: "pi-cold-open",
          what: "pi runner cold start: spawn → open answered",
          unit: "ms",
          baselineWhat,
          notes: [
            "Node start + pi-agent-core/pi-ai import + the SDK + a passive open of an empty native dir",
          ],
        },
        { subject: samples.pi, baseline: samples.node },
        { kind: "none" },
      ),
      timeRow(
        {
          id: "pi-cold-turn",
          what: "pi runner cold start: spawn → first turn answered",
          unit: "ms",
          baselineWhat,
          notes: ["adds the provider module pi-ai loads on first use and one short streamed reply"],
        },
        { subject: samples.piTurn, baseline: samples.node },
        { kind: "none" },
      ),
      timeRow(
        {
          id: "echo-cold-open",
          what: "echo runner (SDK, no pi) cold start: spawn → open answered (context)",
          unit: "ms",
          baselineWhat,
        },
        { subject: samples.echo, baseline: samples.node },
        { kind: "none" },
      ),
    ];
  } finally {
    await fake.close();
  }
}
