// The api harness's warnings: each distinct one once per turn, so a later turn's trouble is told as the first's was.
import { describe, expect, it } from "vitest";
import { events } from "../../testing/brain.js";
import { apiTestBed } from "./testing/bed.js";

const bed = apiTestBed();

describe("a warning a later turn has again", () => {
  it("is told in that turn too, not only in the first", async () => {
    const session = await bed.brain().brain.create({
      harness: "api",
      config: { model: "anthropic:fake-model", tools: ["echo"], options: { max_steps: 1 } },
    });
    bed.fake.script([
      { toolCalls: [{ name: "echo", arguments: { value: "one" } }] },
      { toolCalls: [{ name: "echo", arguments: { value: "two" } }] },
    ]);
    const first = await session.prompt("loop");
    await first.settled;
    const second = await session.prompt("loop again");
    await second.settled;
    const stops = (await events(session))
      .filter((e) => e.type === "harness.warning")
      .filter((e) => /stopped after 1 model requests/.test((e.data as { message: string }).message))
      .map((e) => e.turn);
    expect(stops).toEqual([first.turn, second.turn]);
  });
});

describe("an answer of no text", () => {
  it("says why the provider stopped the model, in its own word (a refusal)", async () => {
    const session = await bed.brain().brain.create({
      harness: "api",
      config: { model: "anthropic:fake-model" },
    });
    bed.fake.script([{ text: "", stopReason: "refusal" }]);
    const turn = await session.prompt("something the model refuses");
    expect((await turn.settled).status).toBe("completed");
    const told = (await events(session))
      .filter((e) => e.type === "harness.warning" && e.turn === turn.turn)
      .map((e) => (e.data as { message: string }).message);
    expect(told).toContainEqual(expect.stringMatching(/answer was empty.*"content-filter".*"refusal"/));
  });
});
