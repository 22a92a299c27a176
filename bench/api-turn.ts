// A turn on the in-process api harness (src/harnesses/api) against the fake provider, compared with sending the
// fake provider the very same request directly: the harness's overhead per turn. Subjects: through Brain
// (session.prompt() to turn.settled: the durable log, the conversation file and the AI SDK included) and the
// AI SDK's streamText alone on the same messages (what the harness adds over the SDK). Baseline: the request
// bodies the harness sent, replayed with fetch and read to the end of the stream, one at a time.
import { createAnthropic } from "@ai-sdk/anthropic";
import { type ModelMessage, streamText } from "ai";
import { Brain } from "../src/core/brain.js";
import { HarnessRegistry } from "../src/core/registry.js";
import { ApiHarnessFactory } from "../src/harnesses/api/factory.js";
import { FsSessionStore } from "../src/store/fs/index.js";
import { type FakeProvider, startFakeProvider } from "../src/testing/fake-provider/index.js";
import { BuiltinTools } from "../src/tools/builtin.js";
import { ToolRouter } from "../src/tools/router.js";
import { completeTurn } from "./lib/brain.js";
import { makeTemp, removeTemp } from "./lib/cleanup.js";
import { type BenchRow, interleave, log, type Sample, timed, timeRow } from "./lib/measure.js";
import { median } from "./lib/stats.js";
import type { BenchOptions } from "./options.js";

const KEY = "sk-bench-api";
const MODEL_ID = "fake-model";
/** Set explicitly, so the SDK does not warn about an unknown model on every request. */
const MAX_OUTPUT_TOKENS = 1024;
/** A reply of about 60 words in 16-character chunks: a short answer, streamed as a real one is. */
const REPLY = Array.from({ length: 60 }, (_, i) => `word${i}`).join(" ");
/** Turns in the sequence that warm the path (first request, lazy imports) and are not timed. */
const WARM = 3;

interface Recorded {
  path: string;
  body: string;
}

async function each<T>(items: T[], fn: (item: T) => Promise<unknown>): Promise<number[]> {
  const ms: number[] = [];
  for (const item of items) {
    const t0 = process.hrtime.bigint();
    await fn(item);
    ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  return ms;
}

function brainOn(fake: FakeProvider, home: string): Brain {
  return new Brain({
    store: new FsSessionStore(home),
    harnesses: new HarnessRegistry([new ApiHarnessFactory({ env: {} })]),
    tools: new ToolRouter([new BuiltinTools()]),
    credentials: () => ({ api_key: KEY, base_url: `${fake.url}/v1` }),
  });
}

const config = { model: `anthropic:${MODEL_ID}`, options: { max_output_tokens: MAX_OUTPUT_TOKENS } };

export async function apiTurnBench(opts: BenchOptions): Promise<BenchRow[]> {
  const turns = WARM + (opts.quick ? 20 : 40);
  const prompts = Array.from({ length: turns }, (_, i) => `Turn ${i}: tell me about the number ${i}.`);
  const fake = await startFakeProvider({ apiKey: KEY });
  fake.setFallback(() => ({ text: REPLY, chunkSize: 16 }));
  log(`api-turn: ${turns - WARM} timed turns per run (after ${WARM} warm-up turns), ${opts.reps} rounds`);
  try {
    // The requests the harness sends for this prompt sequence, once, for the baseline to replay.
    const recordHome = await makeTemp("api-record");
    const recorder = brainOn(fake, recordHome);
    try {
      const session = await recorder.create({ harness: "api", config });
      fake.reset();
      for (const text of prompts) await (await session.prompt(text)).settled;
    } finally {
      await recorder.close();
      await removeTemp(recordHome);
    }
    const recorded: Recorded[] = fake.requests.map((r) => ({ path: r.path, body: JSON.stringify(r.body) }));
    if (recorded.length !== turns)
      throw new Error(`api-turn: ${recorded.length} requests recorded, ${turns} expected`);

    const direct = async (): Promise<Sample> => {
      const send = async (r: Recorded) => {
        const res = await fetch(`${fake.url}${r.path}`, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            "x-api-key": KEY,
            "anthropic-version": "2023-06-01",
          },
          body: r.body,
        });
        await res.text();
      };
      await each(recorded.slice(0, WARM), send);
      const { foreign, result } = await timed(() => each(recorded.slice(WARM), send));
      return { value: median(result), foreign };
    };

    const sdk = async (): Promise<Sample> => {
      const model = createAnthropic({ apiKey: KEY, baseURL: `${fake.url}/v1` })(MODEL_ID);
      const messages: ModelMessage[] = [];
      const turn = async (text: string) => {
        messages.push({ role: "user", content: text });
        const result = streamText({ model, messages, maxOutputTokens: MAX_OUTPUT_TOKENS, maxRetries: 0 });
        for await (const _ of result.textStream) {
          // read the stream to its end, as the harness does
        }
        messages.push(...(await result.response).messages);
      };
      await each(prompts.slice(0, WARM), turn);
      const { foreign, result } = await timed(() => each(prompts.slice(WARM), turn));
      return { value: median(result), foreign };
    };

    const brain = async (): Promise<Sample> => {
      const home = await makeTemp("api-brain");
      const b = brainOn(fake, home);
      try {
        const session = await b.create({ harness: "api", config });
        const turn = (text: string) => completeTurn(session, text, "api-turn");
        await each(prompts.slice(0, WARM), turn);
        const { foreign, result } = await timed(() => each(prompts.slice(WARM), turn));
        return { value: median(result), foreign };
      } finally {
        await b.close();
        await removeTemp(home);
      }
    };

    const samples = await interleave("api-turn", opts.reps, { direct, sdk, brain });
    const notes = [
      `${turns - WARM} turns of one conversation per run (it grows: turn i sends i earlier exchanges), median ms per turn`,
      `each turn: one Anthropic Messages request streaming a ${REPLY.length}-character reply in 16-character chunks`,
      "baseline: the harness's own request bodies for the same turns, sent with fetch and read to the end",
    ];
    const baselineWhat = "the same request, sent straight to the fake provider (fetch, body read to the end)";
    return [
      timeRow(
        {
          id: "api-turn-brain",
          what: "api harness turn through Brain (prompt → turn.settled)",
          unit: "ms",
          baselineWhat,
          notes,
        },
        { subject: samples.brain, baseline: samples.direct },
        { kind: "none" },
      ),
      timeRow(
        {
          id: "api-turn-sdk",
          what: "the AI SDK's streamText alone, same conversation (context)",
          unit: "ms",
          baselineWhat,
          notes: [
            "context: what the provider package costs before Brain adds its log, conversation file and events",
          ],
        },
        { subject: samples.sdk, baseline: samples.direct },
        { kind: "none" },
      ),
    ];
  } finally {
    await fake.close();
  }
}
