// The api harness's conversation file as later requests read it: what a crash or an older Brain left in it still
// makes a request the provider takes.
import { appendFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { encodeLine } from "../../protocol/ndjson.js";
import { CONVERSATION_FILE, type Entry, UNSAVED_RESULT } from "./conversation.js";
import { apiTestBed } from "./testing/bed.js";
import { transcript } from "./testing/provider.js";

const bed = apiTestBed();

/** A session with one finished turn, closed, its conversation file given `entries` more, and opened again. */
async function reopenedWith(entries: Entry[]) {
  const first = bed.brain();
  const session = await first.brain.create({
    harness: "api",
    config: { model: "anthropic:fake-model", tools: ["echo"] },
  });
  await (await session.prompt("one")).settled;
  const file = join(first.store.paths(session.id).native, CONVERSATION_FILE);
  appendFileSync(file, entries.map((entry) => encodeLine(entry)).join(""));
  await first.brain.close();
  const again = bed.brain({ home: first.home });
  return again.brain.session(session.id);
}

const call = (id: string): Entry => ({
  type: "message",
  message: {
    role: "assistant",
    content: [{ type: "tool-call", toolCallId: id, toolName: "echo", input: { value: "v" } }],
  },
  usage: { input: 10, output: 5 },
});

describe("conversation file", () => {
  it("answers a call whose result was never saved (Brain stopped while it ran), so later turns still go", async () => {
    const session = await reopenedWith([call("toolu_unsaved")]);
    bed.fake.script([{ text: "going on" }]);
    const outcome = await (await session.prompt("two")).settled;
    expect(outcome.status).toBe("completed");
    const body = bed.fake.requests[1]!.body;
    expect(transcript(body)).toEqual([
      "user: one",
      "assistant: echo: one [call echo]",
      "user: [tool_result] two",
    ]);
    expect(body.messages[2].content[0]).toEqual({
      type: "tool_result",
      tool_use_id: "toolu_unsaved",
      content: UNSAVED_RESULT,
      is_error: true,
    });
  });
});
