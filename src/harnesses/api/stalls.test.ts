// A provider that stalls in the middle of a tool call (its arguments half sent, then nothing, the connection open):
// the idle timeout ends the request, no half call runs or is logged, and only an answer not yet shown is retried.
import { describe, expect, it } from "vitest";
import { events, textOf } from "../../testing/brain.js";
import { apiTestBed } from "./testing/bed.js";

const bed = apiTestBed();

// Long enough that frame 14 of every format falls inside the arguments, sent four characters at a time.
const stalling = (text: string) => ({
  text,
  toolCalls: [{ name: "echo", arguments: { value: "v".repeat(120) } }],
  chunkSize: 4,
  stallAfter: 14,
});

async function session(provider: string, retries: number) {
  return bed.brain({ provider }).brain.create({
    harness: "api",
    config: { model: `${provider}:fake-model`, tools: ["echo"], options: { retries, idle_timeout_ms: 300 } },
  });
}

describe.each(["anthropic", "openai", "openai-chat"])("%s stalling mid tool call", (provider) => {
  it("fails the turn naming the provider and the stall, and neither runs nor keeps the half call", async () => {
    const s = await session(provider, 3);
    bed.fake.script([stalling("Calling.")]);
    const outcome = await (await s.prompt("echo")).settled;
    expect(outcome).toMatchObject({ status: "failed", error: { code: "provider_error" } });
    expect(outcome.error?.message).toBe(
      `${provider} model "fake-model" went quiet: nothing arrived for 0.3 s (config.options.idle_timeout_ms)`,
    );
    // Text was shown: a retry would show it twice.
    expect(bed.fake.requests).toHaveLength(1);
    const all = await events(s);
    expect(all.filter((e) => e.type.startsWith("tool."))).toEqual([]);
    bed.fake.script([{ text: "ok" }]);
    expect((await (await s.prompt("again")).settled).status).toBe("completed");
    expect(JSON.stringify(bed.fake.requests[1]?.body)).not.toContain("vvvv");
  });

  it("is retried when nothing of the answer was shown, and the retry's answer is the one kept", async () => {
    const s = await session(provider, 1);
    bed.fake.script([stalling(""), { text: "Fine." }]);
    expect((await (await s.prompt("echo")).settled).status).toBe("completed");
    expect(bed.fake.requests).toHaveLength(2);
    const all = await events(s);
    expect(textOf(all)).toBe("Fine.");
    expect(all.filter((e) => e.type.startsWith("tool."))).toEqual([]);
    expect(JSON.stringify(bed.fake.requests[1]?.body)).not.toContain("vvvv");
  });
});
