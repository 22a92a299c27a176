// The api harness's usage on the log: summed over a turn's requests, priced, and reported even when the turn fails.
import { describe, expect, it } from "vitest";
import type { SessionEvent } from "../../protocol/events.js";
import { events } from "../../testing/brain.js";
import { apiTestBed } from "./testing/bed.js";

const bed = apiTestBed();

function apiSession(options: Record<string, unknown> = {}) {
  return bed.brain().brain.create({
    harness: "api",
    config: { model: "anthropic:fake-model", tools: ["echo"], options: { retry_base_ms: 1, ...options } },
  });
}

const messages = (all: SessionEvent[]) =>
  all.filter((e) => e.type === "assistant.message").map((e) => e.data);

describe("usage and cost", () => {
  it("sums usage over the turn's requests and prices it", async () => {
    const session = await apiSession({ price: { input: 3, output: 15 } });
    bed.fake.script([
      { toolCalls: [{ name: "echo", arguments: { value: "v" } }], usage: { input: 1000, output: 100 } },
      { text: "done", usage: { input: 2000, output: 200 } },
    ]);
    await (await session.prompt("x")).settled;
    const [message] = messages(await events(session));
    // (3000 × $3 + 300 × $15) per million tokens
    expect(message?.usage).toEqual({ input: 3000, output: 300, cost: 0.0135 });
  });

  it("reports what a turn spent before it failed, on a message of no text", async () => {
    const session = await apiSession({ retries: 0 });
    bed.fake.script([
      { toolCalls: [{ name: "echo", arguments: { value: "v" } }], usage: { input: 5000, output: 300 } },
      { error: { status: 400, message: "too long" } },
    ]);
    expect((await (await session.prompt("x")).settled).status).toBe("failed");
    expect(messages(await events(session))).toEqual([
      { text: "", usage: { input: 5000, output: 300 }, stop_reason: "error" },
    ]);
  });
});
