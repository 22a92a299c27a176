// What the per-turn benches (api-turn, pi-turn) share: one conversation of short prompts against the fake
// provider, its requests recorded once and replayed with fetch as the baseline, each side's turns timed one at a
// time after the same untimed warm-up, the median turn as the sample.
import type { FakeProvider } from "../../src/testing/fake-provider/index.js";
import type { BenchOptions } from "../options.js";
import { log, type Sample, timed } from "./measure.js";
import { median } from "./stats.js";

/** A reply of about 60 words in 16-character chunks: a short answer, streamed as a real one is. */
const REPLY = Array.from({ length: 60 }, (_, i) => `word${i}`).join(" ");
/** Turns at the start of the conversation that warm the path (first request, lazy imports) and are not timed. */
const WARM = 3;

/**
 * Sets `fake`'s answer to every request of the conversation and returns its prompts: WARM untimed turns, then
 * 20 (quick) or 40 timed ones; says so in the log as `bench`.
 */
export function startConversation(fake: FakeProvider, bench: string, opts: BenchOptions): string[] {
  fake.setFallback(() => ({ text: REPLY, chunkSize: 16 }));
  const turns = WARM + (opts.quick ? 20 : 40);
  log(`${bench}: ${turns - WARM} timed turns per run (after ${WARM} warm-up turns), ${opts.reps} rounds`);
  return Array.from({ length: turns }, (_, i) => `Turn ${i}: tell me about the number ${i}.`);
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

/** Runs `turn` on the first WARM items untimed, then on the rest timed: the median milliseconds per turn. */
export async function medianTurn<T>(items: T[], turn: (item: T) => Promise<unknown>): Promise<Sample> {
  await each(items.slice(0, WARM), turn);
  const { foreign, result } = await timed(() => each(items.slice(WARM), turn));
  return { value: median(result), foreign };
}

interface Recorded {
  path: string;
  body: string;
}

/**
 * The requests `fake` received while `run` played the whole conversation, to replay as the baseline; `bench`
 * names the bench in the error if there is not one request per prompt.
 */
export async function recordRequests(
  fake: FakeProvider,
  prompts: string[],
  bench: string,
  run: () => Promise<void>,
): Promise<Recorded[]> {
  fake.reset();
  await run();
  const recorded = fake.requests.map((r) => ({ path: r.path, body: JSON.stringify(r.body) }));
  if (recorded.length !== prompts.length)
    throw new Error(`${bench}: ${recorded.length} requests recorded, ${prompts.length} expected`);
  return recorded;
}

/** The baseline side: each recorded request sent straight to `fake` with `headers`, its stream read to the end. */
export function replayDirect(
  fake: FakeProvider,
  recorded: Recorded[],
  headers: Record<string, string>,
): () => Promise<Sample> {
  const send = async (r: Recorded) => {
    const res = await fetch(`${fake.url}${r.path}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: r.body,
    });
    await res.text();
  };
  return () => medianTurn(recorded, send);
}

/**
 * What every per-turn row says of its baseline, and its notes; `wire` names the provider API, `sender` what
 * sent the requests.
 */
export function turnRowText(prompts: string[], wire: string, sender: string) {
  return {
    baselineWhat: "the same request, sent straight to the fake provider (fetch, body read to the end)",
    notes: [
      `${prompts.length - WARM} turns of one conversation per run (it grows: turn i sends i earlier exchanges), median ms per turn`,
      `each turn: one ${wire} request streaming a ${REPLY.length}-character reply in 16-character chunks`,
      `baseline: the ${sender}'s own request bodies for the same turns, sent with fetch and read to the end`,
    ],
  };
}
