// 5. A turn through runners/pi (pi's agent core behind the runner protocol) against the fake provider, compared
// with sending the fake provider the very same request directly: the runner's overhead per turn, as a ratio.
// Subjects: through Brain (session.prompt() to turn.settled, the durable log included) and through the runner
// alone (a bare stdio host: prompt frame to its reply). Baseline: the request bodies the runner sent, replayed
// with fetch and read to the end of the stream, one at a time.
import { randomUUID } from "node:crypto";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { Brain } from "../src/core/brain.js";
import { HarnessRegistry } from "../src/core/registry.js";
import { minimalEnvironment } from "../src/harnesses/process/environment.js";
import { ProcessFactory } from "../src/harnesses/process/factory.js";
import { encodeLine, LineSplitter } from "../src/protocol/ndjson.js";
import { FsSessionStore } from "../src/store/fs/index.js";
import { type FakeProvider, startFakeProvider } from "../src/testing/fake-provider/index.js";
import { BuiltinTools } from "../src/tools/builtin.js";
import { ToolRouter } from "../src/tools/router.js";
import { completeTurn } from "./lib/brain.js";
import { makeTemp, removeTemp, spawnTracked, withTimeout } from "./lib/cleanup.js";
import { type BenchRow, interleave, log, type Sample, timed, timeRow } from "./lib/measure.js";
import { median } from "./lib/stats.js";
import type { BenchOptions } from "./options.js";

/** dist/bench → runners/pi/dist/main.js, the command Brain runs. */
export function piRunnerPath(): string {
  return fileURLToPath(new URL("../../runners/pi/dist/main.js", import.meta.url));
}

const KEY = "sk-bench-pi";
const MODEL = "openai/fake-model";
/** A reply of about 60 words in 16-character chunks: a short answer, streamed as a real one is. */
const REPLY = Array.from({ length: 60 }, (_, i) => `word${i}`).join(" ");
/** Turns in the sequence that warm the runner (first request, lazy provider import) and are not timed. */
const WARM = 3;

export function providerFor(fake: FakeProvider) {
  return { api_key: KEY, base_url: `${fake.url}/v1`, api: "openai-completions" };
}

/** A runner spoken to over stdio with nothing in between: open, prompts, replies. No tools, no log. */
export class PiStdio {
  readonly attachment = randomUUID();
  private readonly child;
  private readonly waits = new Map<string, (frame: { error?: { message: string } }) => void>();
  private nextId = 1;
  readonly exited: Promise<unknown>;

  constructor(command: string, args: string[]) {
    this.child = spawnTracked(command, args, {
      stdio: ["pipe", "pipe", "inherit"],
      env: minimalEnvironment(process.env),
    });
    this.exited = once(this.child, "close");
    const splitter = new LineSplitter((line) => {
      const frame = JSON.parse(line) as { id?: string; result?: unknown; error?: { message: string } };
      if (frame.id && ("result" in frame || "error" in frame)) this.waits.get(frame.id)?.(frame);
    });
    this.child.stdout!.on("data", (chunk: Buffer) => splitter.push(chunk));
    this.child.stdin!.on("error", () => {});
  }

  request(method: string, params: unknown, turn?: string): Promise<void> {
    const id = String(this.nextId++);
    const reply = new Promise<void>((resolve, reject) => {
      this.waits.set(id, (frame) => {
        this.waits.delete(id);
        if (frame.error) reject(new Error(`pi runner: "${method}" failed: ${frame.error.message}`));
        else resolve();
      });
    });
    this.child.stdin!.write(
      encodeLine({ attachment: this.attachment, ...(turn ? { turn } : {}), id, method, params }),
    );
    return withTimeout(reply, 60_000, `pi runner "${method}"`);
  }

  open(dir: string, provider: Record<string, string>, model = MODEL): Promise<void> {
    return this.request("open", { session_id: "bench", dir, config: { model }, tools: [], provider });
  }

  prompt(text: string): Promise<void> {
    return this.request("prompt", { text }, randomUUID());
  }

  async close(): Promise<void> {
    this.child.stdin!.end();
    const timer = setTimeout(() => this.child.kill("SIGKILL"), 5_000);
    await this.exited;
    clearTimeout(timer);
  }
}

interface Recorded {
  path: string;
  body: string;
}

/** Milliseconds per call of `fn` for each item, in order. */
async function each<T>(items: T[], fn: (item: T) => Promise<unknown>): Promise<number[]> {
  const ms: number[] = [];
  for (const item of items) {
    const t0 = process.hrtime.bigint();
    await fn(item);
    ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  return ms;
}

export async function piTurnBench(opts: BenchOptions): Promise<BenchRow[]> {
  const turns = WARM + (opts.quick ? 20 : 40);
  const prompts = Array.from({ length: turns }, (_, i) => `Turn ${i}: tell me about the number ${i}.`);
  const fake = await startFakeProvider({ apiKey: KEY });
  fake.setFallback(() => ({ text: REPLY, chunkSize: 16 }));
  log(`pi-turn: ${turns - WARM} timed turns per run (after ${WARM} warm-up turns), ${opts.reps} rounds`);
  try {
    // The requests the runner sends for this prompt sequence, once, for the baseline to replay.
    const dir = await makeTemp("pi-record");
    const recorder = new PiStdio(process.execPath, [piRunnerPath()]);
    try {
      await recorder.open(dir, providerFor(fake));
      fake.reset();
      for (const text of prompts) await recorder.prompt(text);
    } finally {
      await recorder.close();
      await removeTemp(dir);
    }
    const recorded: Recorded[] = fake.requests.map((r) => ({ path: r.path, body: JSON.stringify(r.body) }));
    if (recorded.length !== turns)
      throw new Error(`pi-turn: ${recorded.length} requests recorded, ${turns} expected`);

    const direct = async (): Promise<Sample> => {
      const send = async (r: Recorded) => {
        const res = await fetch(`${fake.url}${r.path}`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${KEY}` },
          body: r.body,
        });
        await res.text();
      };
      await each(recorded.slice(0, WARM), send);
      const { foreign, result } = await timed(() => each(recorded.slice(WARM), send));
      return { value: median(result), foreign };
    };

    const runner = async (): Promise<Sample> => {
      const dir = await makeTemp("pi-runner");
      const pi = new PiStdio(process.execPath, [piRunnerPath()]);
      try {
        await pi.open(dir, providerFor(fake));
        for (const text of prompts.slice(0, WARM)) await pi.prompt(text);
        const { foreign, result } = await timed(() => each(prompts.slice(WARM), (text) => pi.prompt(text)));
        return { value: median(result), foreign };
      } finally {
        await pi.close();
        await removeTemp(dir);
      }
    };

    const brain = async (): Promise<Sample> => {
      const home = await makeTemp("pi-brain");
      const store = new FsSessionStore(home);
      const factory = new ProcessFactory({ name: "pi", command: process.execPath, args: [piRunnerPath()] });
      const b = new Brain({
        store,
        harnesses: new HarnessRegistry([factory]),
        tools: new ToolRouter([new BuiltinTools()]),
        credentials: () => providerFor(fake),
      });
      try {
        const session = await b.create({ harness: "pi", config: { model: MODEL } });
        const turn = (text: string) => completeTurn(session, text, "pi-turn");
        for (const text of prompts.slice(0, WARM)) await turn(text);
        const { foreign, result } = await timed(() => each(prompts.slice(WARM), turn));
        return { value: median(result), foreign };
      } finally {
        await b.close();
        await removeTemp(home);
      }
    };

    const samples = await interleave("pi-turn", opts.reps, { direct, runner, brain });
    const notes = [
      `${turns - WARM} turns of one conversation per run (it grows: turn i sends i earlier exchanges), median ms per turn`,
      `each turn: one Chat Completions request streaming a ${REPLY.length}-character reply in 16-character chunks`,
      "baseline: the runner's own request bodies for the same turns, sent with fetch and read to the end",
    ];
    const baselineWhat = "the same request, sent straight to the fake provider (fetch, body read to the end)";
    return [
      timeRow(
        {
          id: "pi-turn-brain",
          what: "pi turn through Brain (prompt → turn.settled)",
          unit: "ms",
          baselineWhat,
          notes,
        },
        { subject: samples.brain, baseline: samples.direct },
        { kind: "none" },
      ),
      timeRow(
        {
          id: "pi-turn-runner",
          what: "pi turn, runner alone (prompt frame → reply)",
          unit: "ms",
          baselineWhat,
          notes: [
            "the runner over a bare stdio pipe: pi's agent loop, pi-ai, the SDK, the transcript append",
          ],
        },
        { subject: samples.runner, baseline: samples.direct },
        { kind: "none" },
      ),
    ];
  } finally {
    await fake.close();
  }
}
