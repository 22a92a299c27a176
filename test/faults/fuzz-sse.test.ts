// Fuzzing the SSE parsers, through the real client code with `fetch` stubbed to deliver fuzzed bytes in random
// chunks: Brain's own event stream (src/server/sse's formatEvent, read by BrainClient.events), differential
// against schema/session-event.json (every event the schema accepts comes back exactly, whatever the text
// holds and however the bytes are cut); and the HTTP agents' stream (HttpAgentClient.run), where any bytes
// end as events, warnings or a HarnessError, the same ones however they are cut, and never as an exception.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Ajv2020 } from "ajv/dist/2020.js";
import { afterEach, describe, expect, it, vi } from "vitest";
import { BrainClient } from "../../src/client/client.js";
import { HarnessError } from "../../src/core/harness.js";
import { HttpAgentClient } from "../../src/harnesses/http/client.js";
import type { SessionEvent } from "../../src/protocol/events.js";
import type { DecodedHarnessEvent } from "../../src/protocol/nui/harness-event.js";
import { formatEvent } from "../../src/server/sse/hub.js";
import { chunks, ITERATIONS, mutate, Prng, randomValue, repro, SEED } from "./fuzz.js";

afterEach(() => {
  vi.unstubAllGlobals();
});

/** A fetch that answers once with `parts` as an event stream, then refuses (so a reconnect shows). */
function streamOnce(parts: Buffer[]): { calls: () => number } {
  let calls = 0;
  vi.stubGlobal("fetch", async (_url: string, init?: RequestInit) => {
    calls++;
    if (calls > 1) {
      if (init?.signal?.aborted) throw new DOMException("aborted", "AbortError");
      throw new TypeError("fetch failed (the fuzzed stream ended)");
    }
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const part of parts) controller.enqueue(new Uint8Array(part));
        controller.close();
      },
    });
    return new Response(body, { status: 200, headers: { "content-type": "text/event-stream" } });
  });
  return { calls: () => calls };
}

const TEXTS = [
  "plain",
  "two\nlines",
  "cr\r\nlf",
  "\r",
  "data: inside",
  "\u2028\u2029",
  "😀é",
  "\u0000",
  ":colon",
  "",
];

/** A session event with awkward text: deltas, messages, warnings. */
function sessionEvent(rng: Prng, seq: number): Record<string, unknown> {
  const text = Array.from({ length: rng.int(4) + 1 }, () => rng.pick(TEXTS)).join("");
  const base = { seq, ts: "2026-01-01T00:00:00.000Z", session: "s1", turn: "t1" };
  switch (rng.int(4)) {
    case 0:
      return { ...base, type: "assistant.message", data: { text, stop_reason: "end_turn" } };
    case 1:
      return { ...base, type: "harness.warning", data: { message: text } };
    case 2:
      // Sometimes not a valid event at all: the schema says so, and the stream must still carry it intact.
      return { ...base, type: "assistant.delta", data: randomValue(rng, 2) };
    default:
      return { ...base, type: "assistant.delta", data: { text } };
  }
}

describe("fuzz: SSE, Brain's event stream", () => {
  it("codec", async () => {
    const ajv = new Ajv2020({ strict: false });
    const schemaText = readFileSync(join(import.meta.dirname, "../../schema/session-event.json"), "utf8");
    const valid = ajv.compile(JSON.parse(schemaText));
    const rng = new Prng(SEED);
    let checked = 0;
    let schemaValid = 0;
    for (let i = 0; i < ITERATIONS / 20; i++) {
      const sent = Array.from({ length: rng.int(6) + 1 }, (_, n) => sessionEvent(rng, n + 1));
      for (const event of sent) if (valid(event)) schemaValid++;
      const wire = sent.map((event) => formatEvent(event as unknown as SessionEvent).text).join("");
      const fetched = streamOnce(chunks(rng, Buffer.from(wire, "utf8")));
      const abort = new AbortController();
      const got: unknown[] = [];
      const client = new BrainClient({ url: "http://fuzz.invalid", token: "t" });
      const stream = client.events("s1", {
        signal: abort.signal,
        retryMs: 1,
        onDrop: () => abort.abort(),
      });
      for await (const event of stream) {
        got.push(event);
        if (got.length === sent.length) abort.abort();
      }
      // JSON's view of what was sent (-0 is 0 on any wire).
      expect(got, repro("events changed on the way", wire)).toEqual(JSON.parse(JSON.stringify(sent)));
      expect(fetched.calls()).toBeGreaterThan(0);
      checked += sent.length;
    }
    expect(checked).toBeGreaterThan(0);
    // The generator reached both sides of the schema's decision.
    expect(schemaValid).toBeGreaterThan(0);
    expect(schemaValid).toBeLessThan(checked);
  });
});

/** Runs one fuzzed HTTP agent stream through the real client; what came out, in order. */
async function agentRun(parts: Buffer[]): Promise<string[]> {
  streamOnce(parts);
  const client = new HttpAgentClient("http://fuzz.invalid", "fuzz");
  const out: string[] = [];
  try {
    const end = await client.run(
      { message: "m", runId: "r" },
      new AbortController().signal,
      (d: DecodedHarnessEvent) => out.push(JSON.stringify(d)),
    );
    out.push(`end:${end}`);
  } catch (err) {
    if (!(err instanceof HarnessError)) throw err;
    out.push(`harness error: ${err.code}`);
  }
  return out;
}

describe("fuzz: SSE, HTTP agents", () => {
  it("codec", async () => {
    const rng = new Prng(SEED + 2);
    const blocks = readFileSync(join(import.meta.dirname, "corpus/sse.txt"), "utf8").split("\n\n");
    const crashes: string[] = [];
    for (let i = 0; i < ITERATIONS / 10; i++) {
      // Mutate some of the stream's events (their data lines); keep the rest as they are.
      const text = blocks
        .map((block) =>
          rng.chance(0.3) ? block.replace(/data: (.*)/, (_, d: string) => `data: ${mutate(rng, d)}`) : block,
        )
        .join(rng.pick(["\n\n", "\r\n\r\n", "\n\n"]));
      const bytes = Buffer.from(text, "utf8");
      try {
        const whole = await agentRun([bytes]);
        const cut = await agentRun(chunks(rng, bytes));
        expect(cut, repro("chunking changed what the client saw", text)).toEqual(whole);
      } catch (err) {
        if ((err as Error).name === "AssertionError") throw err;
        crashes.push(repro(`${(err as Error).name}: ${(err as Error).message}`, text));
      }
    }
    expect(crashes.slice(0, 5)).toEqual([]);
  });
});
