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
import { type BenchRow, interleave, type Sample, timeRow } from "./lib/measure.js";
import { medianTurn, recordRequests, replayDirect, startConversation, turnRowText } from "./lib/turns.js";
import type { BenchOptions } from "./options.js";

const KEY = "sk-bench-api";
const MODEL_ID = "fake-model";
/** Set explicitly, so the SDK does not warn about an unknown model on every request. */
const MAX_OUTPUT_TOKENS = 1024;

function brainOn(fake: FakeProvider, home: string): Brain {
  return new Brain({
    store: new FsSessionStore(home),
    harnesses: new HarnessRegistry([new ApiHarnessFactory()]),
    tools: new ToolRouter([new BuiltinTools()]),
    credentials: () => ({ api_key: KEY, base_url: `${fake.url}/v1` }),
  });
}

const config = { model: `anthropic:${MODEL_ID}`, options: { max_output_tokens: MAX_OUTPUT_TOKENS } };

export async function apiTurnBench(opts: BenchOptions): Promise<BenchRow[]> {
  const fake = await startFakeProvider({ apiKey: KEY });
  const prompts = startConversation(fake, "api-turn", opts);
  try {
    // The requests the harness sends for this prompt sequence, once, for the baseline to replay.
    const recordHome = await makeTemp("api-record");
    const recorder = brainOn(fake, recordHome);
    const recorded = await recordRequests(fake, prompts, "api-turn", async () => {
      const session = await recorder.create({ harness: "api", config });
      for (const text of prompts) await (await session.prompt(text)).settled;
    }).finally(async () => {
      await recorder.close();
      await removeTemp(recordHome);
    });
    const direct = replayDirect(fake, recorded, { "x-api-key": KEY, "anthropic-version": "2023-06-01" });

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
      return medianTurn(prompts, turn);
    };

    const brain = async (): Promise<Sample> => {
      const home = await makeTemp("api-brain");
      const b = brainOn(fake, home);
      try {
        const session = await b.create({ harness: "api", config });
        return await medianTurn(prompts, (text) => completeTurn(session, text, "api-turn"));
      } finally {
        await b.close();
        await removeTemp(home);
      }
    };

    const samples = await interleave("api-turn", opts.reps, { direct, sdk, brain });
    const { notes, baselineWhat } = turnRowText(prompts, "Anthropic Messages", "harness");
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
