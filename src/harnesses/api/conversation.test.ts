// The api harness's conversation file as later requests read it: what a crash or an older Brain left in it still
// makes a request the provider takes.
import { appendFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { encodeLine } from "../../protocol/ndjson.js";
import { events } from "../../testing/brain.js";
import { SUMMARY_REQUEST } from "./compaction.js";
import {
  CONVERSATION_FILE,
  type Entry,
  MAX_RESULT_CHARS,
  SILENT_FAILURE,
  shortenedResult,
  UNSAVED_RESULT,
} from "./conversation.js";
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

describe("text that is only whitespace", () => {
  it("is left out of later requests (Anthropic refuses a blank text block), the calls beside it kept", async () => {
    const session = await reopenedWith([{ type: "message", message: { role: "user", content: " \n" } }]);
    bed.fake.script([
      { text: "\n\n", toolCalls: [{ id: "toolu_1", name: "echo", arguments: { value: "v" } }] },
      { text: "done" },
    ]);
    expect((await (await session.prompt("two")).settled).status).toBe("completed");
    const body = bed.fake.requests[2]!.body;
    const texts = body.messages.flatMap((m: { content: { type: string; text?: string }[] }) =>
      m.content.filter((p) => p.type === "text").map((p) => p.text),
    );
    expect(texts).toEqual(["one", "echo: one", "two"]);
    expect(transcript(body)).toEqual([
      "user: one",
      "assistant: echo: one",
      "user: two",
      "assistant: [call echo]",
      "user: [tool_result]",
    ]);
  });
});

describe("a call that failed without a word", () => {
  it("is answered with words (Anthropic refuses an error result with empty content)", async () => {
    const session = await reopenedWith([
      call("toolu_mute"),
      {
        type: "message",
        message: {
          role: "tool",
          content: [
            {
              type: "tool-result",
              toolCallId: "toolu_mute",
              toolName: "echo",
              output: { type: "error-text", value: "" },
            },
          ],
        },
      },
    ]);
    bed.fake.script([{ text: "going on" }]);
    expect((await (await session.prompt("two")).settled).status).toBe("completed");
    expect(bed.fake.requests[1]!.body.messages[2].content[0]).toEqual({
      type: "tool_result",
      tool_use_id: "toolu_mute",
      content: SILENT_FAILURE,
      is_error: true,
    });
  });
});

describe("a tool result too long for any model's context", () => {
  it("is sent as its start and its end, so it does not fail this and every later request", async () => {
    const value = `first line\n${"x".repeat(4_000_000)}\nthe error at the end`;
    const session = await reopenedWith([
      call("toolu_huge"),
      {
        type: "message",
        message: {
          role: "tool",
          content: [
            {
              type: "tool-result",
              toolCallId: "toolu_huge",
              toolName: "echo",
              output: { type: "text", value },
            },
          ],
        },
      },
    ]);
    bed.fake.script([{ text: "going on" }]);
    expect((await (await session.prompt("two")).settled).status).toBe("completed");
    const sent = bed.fake.requests[1]!.body.messages[2].content[0].content as string;
    expect(sent.length).toBeLessThan(200_000);
    expect(sent.length).toBeLessThan(MAX_RESULT_CHARS + 200);
    expect(sent).toBe(shortenedResult(value));
    expect(sent.startsWith("first line")).toBe(true);
    expect(sent.endsWith("the error at the end")).toBe(true);
    expect(sent).toContain("characters of this tool result left out");
  });
});

/** The tool_result blocks of an Anthropic request, as [tool_use_id, content]. */
function results(body: { messages: { content: unknown }[] }): [string, string][] {
  return body.messages.flatMap((m) =>
    Array.isArray(m.content)
      ? m.content
          .filter((p: { type: string }) => p.type === "tool_result")
          .map(
            (p: { tool_use_id: string; content: string }) => [p.tool_use_id, p.content] as [string, string],
          )
      : [],
  );
}

describe("calls the SDK cannot parse", () => {
  it("answers a call with arguments that are not JSON, or to a tool not offered, once, and logs why", async () => {
    const session = await bed.brain().brain.create({
      harness: "api",
      config: { model: "anthropic:fake-model", tools: ["echo"] },
    });
    bed.fake.script([
      {
        toolCalls: [
          { id: "toolu_bad", name: "echo", arguments: {}, argumentsJson: '{"value": "x' },
          { id: "toolu_unknown", name: "nosuch", arguments: { a: 1 } },
        ],
      },
      { text: "sorry" },
    ]);
    expect((await (await session.prompt("go")).settled).status).toBe("completed");
    expect(results(bed.fake.requests[1]!.body)).toEqual([
      ["toolu_bad", 'the arguments of echo must be a JSON object; got: {"value": "x'],
      ["toolu_unknown", 'tool "nosuch" is not bound to this session; bound tools: echo'],
    ]);
    const warnings = (await events(session))
      .filter((e) => e.type === "harness.warning")
      .map((e) => (e.data as { message: string }).message);
    expect(warnings).toContain(
      'tool call "toolu_bad" (echo) was not run: the arguments of echo must be a JSON object; got: {"value": "x',
    );
  });

  it("sends one answer of a call a conversation file answers twice (written before that was fixed)", async () => {
    const answer = (value: string) => ({
      type: "tool-result" as const,
      toolCallId: "toolu_twice",
      toolName: "nosuch",
      output: { type: "error-text" as const, value },
    });
    const session = await reopenedWith([
      call("toolu_twice"),
      { type: "message", message: { role: "tool", content: [answer("the SDK's")] } },
      { type: "message", message: { role: "tool", content: [answer("Brain's")] } },
    ]);
    await (await session.prompt("two")).settled;
    expect(results(bed.fake.requests[1]!.body)).toEqual([["toolu_twice", "Brain's"]]);
  });
});

describe("calls of one answer under the same id", () => {
  it("get ids of their own, so each runs and is answered and the answer stays one a provider takes", async () => {
    const session = await bed.brain().brain.create({
      harness: "api",
      config: { model: "anthropic:fake-model", tools: ["echo"] },
    });
    bed.fake.script([
      {
        toolCalls: [
          { id: "toolu_same", name: "echo", arguments: { value: "a" } },
          { id: "toolu_same", name: "echo", arguments: { value: "b" } },
        ],
      },
      { text: "done" },
    ]);
    expect((await (await session.prompt("x")).settled).status).toBe("completed");
    const logged = (await events(session))
      .filter((e) => e.type === "tool.result")
      .map((e) => e.data as { id: string; content: { text: string }[] });
    expect(logged.map((r) => [r.id, r.content[0]!.text])).toEqual([
      ["toolu_same", "a"],
      ["toolu_same_2", "b"],
    ]);
    // Anthropic refuses a request whose tool_use ids repeat, and the conversation sends this answer every time.
    const [, assistant, replies] = bed.fake.requests[1]!.body.messages;
    expect(assistant.content.map((p: { id: string }) => p.id)).toEqual(["toolu_same", "toolu_same_2"]);
    expect(results({ messages: [replies] })).toEqual([
      ["toolu_same", "a"],
      ["toolu_same_2", "b"],
    ]);
  });
});

describe("compaction", () => {
  it("keeps the conversation when the model's summary comes back empty", async () => {
    const session = await bed.brain().brain.create({
      harness: "api",
      config: { model: "anthropic:fake-model", options: { compact_at_tokens: 1000 } },
    });
    bed.fake.script([
      { text: "the number is 42", usage: { input: 1500, output: 10 } },
      { text: "" },
      { text: "42" },
    ]);
    await (await session.prompt("remember the number 42")).settled;
    expect((await (await session.prompt("which number?")).settled).status).toBe("completed");
    expect(transcript(bed.fake.requests[2]!.body)).toEqual([
      "user: remember the number 42",
      "assistant: the number is 42",
      "user: which number?",
    ]);
    const all = await events(session);
    expect(all.filter((e) => e.type === "context.compacted")).toEqual([]);
    expect(all.map((e) => (e.data as { message?: string }).message)).toContain(
      "compacting the conversation failed, going on without: the model's summary was empty",
    );
  });
});

describe("compaction of a conversation past the model's context", () => {
  it("tries the summary again with the tool results cut short, so the session is not stuck", async () => {
    const session = await bed.brain().brain.create({
      harness: "api",
      config: { model: "anthropic:fake-model", tools: ["echo"], options: { compact_at_tokens: 1000 } },
    });
    const output = "y".repeat(50_000);
    bed.fake.script([
      { toolCalls: [{ name: "echo", arguments: { value: output } }], usage: { input: 900, output: 10 } },
      { text: "read it", usage: { input: 1500, output: 10 } },
      { error: { status: 400, message: "prompt is too long: 250000 tokens > 200000 maximum" } },
      { text: "the user had the tool print 50,000 y" },
      { text: "done" },
    ]);
    await (await session.prompt("print it")).settled;
    expect((await (await session.prompt("and now?")).settled).status).toBe("completed");
    const [, , first, second] = bed.fake.requests;
    expect(results(first!.body)).toEqual([[expect.any(String), output]]);
    const [[, shortened]] = results(second!.body) as [[string, string]];
    expect(shortened.length).toBeLessThan(2_500);
    expect(shortened).toContain("characters of this tool result left out");
    const compacted = (await events(session)).filter((e) => e.type === "context.compacted");
    expect(compacted.map((e) => e.data)).toEqual([{ summary: "the user had the tool print 50,000 y" }]);
  });
});

describe("a turn that failed on what its tools returned", () => {
  it("has the next turn compact the conversation, though no request measured it", async () => {
    const session = await bed.brain().brain.create({
      harness: "api",
      config: {
        model: "anthropic:fake-model",
        tools: ["echo"],
        options: { compact_at_tokens: 1000, retries: 0 },
      },
    });
    bed.fake.script([
      {
        toolCalls: [{ name: "echo", arguments: { value: "y".repeat(50_000) } }],
        usage: { input: 900, output: 10 },
      },
      { error: { status: 400, message: "prompt is too long: 250000 tokens > 200000 maximum" } },
      { text: "the tool printed 50,000 y" },
      { text: "done" },
    ]);
    expect((await (await session.prompt("print it")).settled).status).toBe("failed");
    expect((await (await session.prompt("and now?")).settled).status).toBe("completed");
    expect(transcript(bed.fake.requests[2]!.body).at(-1)).toContain(SUMMARY_REQUEST);
    const compacted = (await events(session)).filter((e) => e.type === "context.compacted");
    expect(compacted.map((e) => e.data)).toEqual([{ summary: "the tool printed 50,000 y" }]);
  });
});

describe("a rebuild of a compacted conversation", () => {
  it("goes on from the summary, as the conversation file did, not from everything the summary replaced", async () => {
    const first = bed.brain();
    const session = await first.brain.create({
      harness: "api",
      config: { model: "anthropic:fake-model", options: { compact_at_tokens: 1000 } },
    });
    bed.fake.script([
      { text: "the old answer", usage: { input: 1500, output: 10 } },
      { text: "SUMMARY: 42 was asked about" },
      { text: "after the summary" },
      { text: "rebuilt" },
    ]);
    await (await session.prompt("the old question")).settled;
    await (await session.prompt("a new one")).settled;
    await first.brain.close();
    const again = bed.brain({ home: first.home });
    await again.brain.rebuild(session.id);
    const rebuilt = await again.brain.session(session.id);
    expect((await (await rebuilt.prompt("third")).settled).status).toBe("completed");
    // Carried whole, the history could be past the model's context, with nothing in the file to compact it again.
    const body = bed.fake.requests[3]!.body;
    expect(transcript(body)).toEqual([
      expect.stringMatching(
        /^user: \[The conversation so far was compacted.*SUMMARY: 42 was asked about a new one$/s,
      ),
      "assistant: after the summary",
      "user: third",
    ]);
    expect(JSON.stringify(body)).not.toContain("the old");
  });
});

describe("an answer that failed midway", () => {
  it("keeps what the user saw of it, in the conversation and as the turn's message", async () => {
    const session = await bed.brain().brain.create({
      harness: "api",
      config: { model: "anthropic:fake-model", options: { retries: 0 } },
    });
    bed.fake.script([{ text: "The first half, then the rest", chunkSize: 4, endAfter: 7 }, { text: "ok" }]);
    const broken = await session.prompt("tell me");
    expect((await broken.settled).status).toBe("failed");
    await (await session.prompt("go on")).settled;
    const all = await events(session);
    const seen = all
      .filter((e) => e.type === "assistant.delta" && e.turn === broken.turn)
      .map((e) => (e.data as { text: string }).text)
      .join("");
    expect(seen).not.toBe("");
    expect(all.find((e) => e.type === "assistant.message" && e.turn === broken.turn)?.data).toMatchObject({
      text: seen,
      stop_reason: "error",
    });
    expect(transcript(bed.fake.requests[1]!.body)).toEqual([
      "user: tell me",
      `assistant: ${seen}`,
      "user: go on",
    ]);
  });
});

describe("a turn that fails before any answer", () => {
  it("leaves its prompt out of the conversation, so a prompt refused as too long does not fail every later turn", async () => {
    const session = await bed.brain().brain.create({
      harness: "api",
      config: { model: "anthropic:fake-model", options: { retries: 0 } },
    });
    bed.fake.script([
      { error: { status: 400, message: "prompt is too long: 300000 tokens > 200000 maximum" } },
      { text: "answered" },
    ]);
    expect((await (await session.prompt("a prompt far too long")).settled).error?.message).toBe(
      'anthropic model "fake-model" answered HTTP 400: prompt is too long: 300000 tokens > 200000 maximum',
    );
    expect((await (await session.prompt("a short one")).settled).status).toBe("completed");
    expect(transcript(bed.fake.requests[1]!.body)).toEqual(["user: a short one"]);
  });
});
