// runners/pi → itself (issue 17): a session whose conversation.jsonl was lost fails its next turn loudly after
// a restart, with no model request; `rebuild` (the runner family's seeding: a marked summary, Brain does not
// write a runner's own format) makes the next request carry every earlier prompt, answer and tool result.
import { rmSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { TestBrain } from "../../src/testing/brain.js";
import { bodyText, FORMATS, usePiBed } from "./helpers.js";

let t: TestBrain;
const bed = usePiBed();

const format = FORMATS.find((f) => f.api === "anthropic-messages")!;

describe("runners/pi rebuild", () => {
  it("a lost transcript fails loudly; rebuilt, the next request carries the history as a summary", async () => {
    t = bed.brain(format);
    const session = await t.brain.create({ harness: "pi", config: { model: format.model, tools: ["echo"] } });
    bed.fake.script([
      { text: "Let me call.", toolCalls: [{ name: "echo", arguments: { value: "KUMQUAT" } }] },
      { text: "The tool said KUMQUAT." },
    ]);
    expect((await (await session.prompt("Call echo with KUMQUAT")).settled).status).toBe("completed");
    const home = t.home;
    await t.brain.close();
    rmSync(join(t.store.paths(session.id).native, "conversation.jsonl"));

    t = bed.brain(format, { home });
    const before = bed.fake.requests.length;
    const lost = await (await (await t.brain.session(session.id)).prompt("what did it say?")).settled;
    expect(lost.status).toBe("failed");
    expect(lost.error?.message).toMatch(/runner "pi" is missing.*last prompt "Call echo with KUMQUAT"/);
    expect(bed.fake.requests.length).toBe(before);

    expect((await t.brain.rebuild(session.id)).seeded.how).toBe("summary");
    bed.fake.script([{ text: "It said KUMQUAT." }]);
    const again = await t.brain.session(session.id);
    expect((await (await again.prompt("what did it say?")).settled).status).toBe("completed");
    const sent = bodyText(bed.fake.requests.at(-1));
    for (const text of [
      "Call echo with KUMQUAT",
      "Let me call.",
      "The tool said KUMQUAT.",
      "what did it say?",
    ]) {
      expect(sent).toContain(text);
    }
    expect(sent).toContain("Assistant called tool echo with");
    expect(sent).toContain("Tool echo returned: KUMQUAT");
    expect(sent).toContain("Conversation history, carried over");
  });
});
