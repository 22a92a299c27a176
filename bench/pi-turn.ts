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
import { type BenchRow, interleave, type Sample, timeRow } from "./lib/measure.js";
import { medianTurn, recordRequests, replayDirect, startConversation, turnRowText } from "./lib/turns.js";
import type { BenchOptions } from "./options.js";

/** dist/bench → runners/pi/dist/main.js, the command Brain runs. */
export function piRunnerPath(): string {
  return fileURLToPath(new URL("../../runners/pi/dist/main.js", import.meta.url));
}

const KEY = "sk-bench-pi";
const MODEL = "openai/fake-model";

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

export async function piTurnBench(opts: BenchOptions): Promise<BenchRow[]> {
  const fake = await startFakeProvider({ apiKey: KEY });
  const prompts = startConversation(fake, "pi-turn", opts);
  try {
    // The requests the runner sends for this prompt sequence, once, for the baseline to replay.
    const dir = await makeTemp("pi-record");
    const recorder = new PiStdio(process.execPath, [piRunnerPath()]);
    const recorded = await recordRequests(fake, prompts, "pi-turn", async () => {
      await recorder.open(dir, providerFor(fake));
      for (const text of prompts) await recorder.prompt(text);
    }).finally(async () => {
      await recorder.close();
      await removeTemp(dir);
    });
    const direct = replayDirect(fake, recorded, { authorization: `Bearer ${KEY}` });

    const runner = async (): Promise<Sample> => {
      const dir = await makeTemp("pi-runner");
      const pi = new PiStdio(process.execPath, [piRunnerPath()]);
      try {
        await pi.open(dir, providerFor(fake));
        return await medianTurn(prompts, (text) => pi.prompt(text));
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
        return await medianTurn(prompts, (text) => completeTurn(session, text, "pi-turn"));
      } finally {
        await b.close();
        await removeTemp(home);
      }
    };

    const samples = await interleave("pi-turn", opts.reps, { direct, runner, brain });
    const { notes, baselineWhat } = turnRowText(prompts, "Chat Completions", "runner");
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
