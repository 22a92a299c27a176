// A provider may be quiet for as long as idle_timeout_ms says, not only as long as fetch's shared pool waits
// (300 s by default, shortened here to stand for it): each session reaches its provider on connections of its own.
import { Agent, getGlobalDispatcher, setGlobalDispatcher } from "undici";
import { afterEach, describe, expect, it } from "vitest";
import { apiTestBed } from "./testing/bed.js";

const bed = apiTestBed();
const shared = getGlobalDispatcher();
afterEach(() => setGlobalDispatcher(shared));

describe("a provider quiet for longer than fetch's shared pool waits", () => {
  it("is cut by idle_timeout_ms, which names itself, not by the shared pool", async () => {
    const s = await bed.brain().brain.create({
      harness: "api",
      config: { model: "anthropic:fake-model", options: { retries: 0, idle_timeout_ms: 2_000 } },
    });
    setGlobalDispatcher(new Agent({ headersTimeout: 200, bodyTimeout: 200 }));
    bed.fake.script([{ text: "Thinking it over.", chunkSize: 4, stallAfter: 3 }]);
    const outcome = await (await s.prompt("think")).settled;
    expect(outcome.error?.message).toBe(
      'anthropic model "fake-model" went quiet: nothing arrived for 2 s (config.options.idle_timeout_ms)',
    );
  });
});
