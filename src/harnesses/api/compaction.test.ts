// Compaction as a turn meets it: what an interrupt while the model summarises leaves in the conversation.
import { describe, expect, it } from "vitest";
import { SUMMARY_REQUEST } from "./compaction.js";
import { apiTestBed } from "./testing/bed.js";

const bed = apiTestBed();

describe("an interrupt while the conversation is compacted", () => {
  it("keeps the turn's prompt, as an interrupt of the turn's own request does", async () => {
    const session = await bed.brain().brain.create({
      harness: "api",
      config: { model: "anthropic:fake-model", options: { compact_at_tokens: 1000 } },
    });
    bed.fake.script([
      { text: "the number is 42", usage: { input: 1500, output: 10 } },
      { hang: true },
      { text: "the user chose 42, then asked for its square" },
      { text: "1764" },
    ]);
    await (await session.prompt("remember the number 42")).settled;
    const turn = await session.prompt("now square it");
    await bed.fake.waitForRequests(2);
    await session.interrupt();
    expect((await turn.settled).status).toBe("interrupted");
    expect(JSON.stringify(bed.fake.requests[1]!.body)).toContain(SUMMARY_REQUEST);

    await (await session.prompt("go on")).settled;
    const summary = JSON.stringify(bed.fake.requests[2]!.body);
    expect(summary).toContain(SUMMARY_REQUEST);
    expect(summary).toContain("now square it");
  });
});
