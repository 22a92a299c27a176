// The api harness's turn rules, on Anthropic's wire (the provider matrix is in providers.test.ts): steering,
// interrupts, provider failures and retries, checkpoint fidelity, passive open, compaction, images (usage and cost:
// usage.test.ts).
import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { SessionEvent } from "../../protocol/events.js";
import { events, makeBrain, tempDir, textOf, waitForEvent } from "../../testing/brain.js";
import { SUMMARY_REQUEST } from "./compaction.js";
import { CONVERSATION_FILE } from "./conversation.js";
import { apiTestBed } from "./testing/bed.js";
import { GateTool } from "./testing/gate-tool.js";
import { transcript } from "./testing/provider.js";
import { toCallParams } from "./tools.js";

/** `gate` answers only when released (or when the call is aborted): a tool the test holds open. */
let gate: GateTool;
const bed = apiTestBed();

function brain(home?: string) {
  gate = new GateTool();
  return bed.brain({ tools: [gate], ...(home ? { home } : {}) });
}

async function apiSession(options: Record<string, unknown> = {}, tools = ["echo", "gate"]) {
  return brain().brain.create({
    harness: "api",
    config: { model: "anthropic:fake-model", tools, options: { retry_base_ms: 1, ...options } },
  });
}

const ofType = (all: SessionEvent[], type: string) =>
  all.filter((e) => e.type === type).map((e) => e.data as Record<string, unknown>);

/** The harness's own warnings, without the SDK's note that it does not know the fake model's limits. */
const warnings = (all: SessionEvent[]) =>
  ofType(all, "harness.warning")
    .map((w) => w.message as string)
    .filter((m) => !m.startsWith("maxOutputTokens"));

describe("steering", () => {
  it("joins the conversation at the next step boundary", async () => {
    const session = await apiSession();
    bed.fake.script([{ toolCalls: [{ name: "gate", arguments: {} }] }, { text: "steered answer" }]);
    const turn = await session.prompt("start");
    await waitForEvent(session, (e) => e.type === "tool.call");
    await session.steer("also do this");
    gate.open();
    expect((await turn.settled).status).toBe("completed");
    expect(transcript(bed.fake.requests[1]!.body)).toEqual([
      "user: start",
      "assistant: [call gate]",
      "user: [tool_result] also do this",
    ]);
    expect(ofType(await events(session), "user.steer")).toEqual([{ text: "also do this" }]);
  });

  it("gets a steer that came during the final answer answered in the same turn", async () => {
    const session = await apiSession();
    bed.fake.script([{ text: "slow answer here", chunkSize: 1, delayMs: 30 }, { text: "second" }]);
    const turn = await session.prompt("go");
    await waitForEvent(session, (e) => e.type === "assistant.delta");
    await session.steer("and more");
    expect((await turn.settled).status).toBe("completed");
    const all = await events(session);
    expect(ofType(all, "assistant.message").map((m) => m.text)).toEqual(["slow answer here", "second"]);
    expect(transcript(bed.fake.requests[1]!.body).at(-1)).toBe("user: and more");
  });
});

describe("interrupts", () => {
  it("aborts a request in flight and settles as interrupted; the next turn goes on", async () => {
    const session = await apiSession();
    bed.fake.script([{ hang: true }]);
    const turn = await session.prompt("wait forever");
    await bed.fake.waitForRequests(1);
    await session.interrupt();
    expect((await turn.settled).status).toBe("interrupted");
    await expect.poll(() => bed.fake.requests[0]?.aborted).toBe(true);
    await (await session.prompt("again")).settled;
    // Two user messages in a row (the interrupted turn has no answer): the SDK sends them as one.
    expect(transcript(bed.fake.requests[1]!.body)).toEqual(["user: wait forever again"]);
  });

  it("keeps what was streamed before the interrupt as the assistant's message", async () => {
    const session = await apiSession();
    bed.fake.script([{ text: "a long answer that takes a while", chunkSize: 2, delayMs: 40 }]);
    const turn = await session.prompt("talk");
    await waitForEvent(session, (e) => e.type === "assistant.delta");
    await session.interrupt();
    expect((await turn.settled).status).toBe("interrupted");
    const all = await events(session);
    const [message] = ofType(all, "assistant.message");
    expect(message).toMatchObject({ stop_reason: "interrupted", text: textOf(all) });
    await (await session.prompt("next")).settled;
    expect(transcript(bed.fake.requests[1]!.body)[1]).toBe(`assistant: ${textOf(all)}`);
  });

  it("cancels a waiting tool; its cancelled result keeps the conversation well formed", async () => {
    const session = await apiSession();
    bed.fake.script([{ toolCalls: [{ name: "gate", arguments: {} }] }]);
    const turn = await session.prompt("use the gate");
    await waitForEvent(session, (e) => e.type === "tool.call");
    await session.interrupt();
    expect((await turn.settled).status).toBe("interrupted");
    const [result] = ofType(await events(session), "tool.result");
    expect(result).toMatchObject({ is_error: true });
    expect(bed.fake.requests).toHaveLength(1);
    await (await session.prompt("after")).settled;
    const body = bed.fake.requests[1]!.body;
    expect(transcript(body)).toEqual([
      "user: use the gate",
      "assistant: [call gate]",
      "user: [tool_result] after",
    ]);
    expect(body.messages[2].content[0]).toMatchObject({ type: "tool_result", is_error: true });
  });
});

describe("provider failures", () => {
  it("fails the turn with provider_error and the provider's message", async () => {
    const session = await apiSession();
    bed.fake.script([
      { error: { status: 400, message: "prompt is too long: 300000 tokens > 200000 maximum" } },
    ]);
    const outcome = await (await session.prompt("x")).settled;
    expect(outcome).toMatchObject({
      status: "failed",
      error: {
        code: "provider_error",
        message:
          'anthropic model "fake-model" answered HTTP 400: prompt is too long: 300000 tokens > 200000 maximum',
      },
    });
    expect(bed.fake.requests).toHaveLength(1);
  });

  it("retries retryable statuses with backoff, saying so, and goes on", async () => {
    const session = await apiSession({ retries: 2 });
    bed.fake.script([
      { error: { status: 429, message: "rate limited" } },
      { error: { status: 529, message: "overloaded" } },
      { text: "made it" },
    ]);
    const outcome = await (await session.prompt("x")).settled;
    expect(outcome.status).toBe("completed");
    const all = await events(session);
    expect(textOf(all)).toBe("made it");
    expect(warnings(all)).toEqual([
      expect.stringMatching(/HTTP 429: rate limited; retrying in .* s \(retry 1 of 2\)/),
      expect.stringMatching(/HTTP 529: overloaded; retrying in .* s \(retry 2 of 2\)/),
    ]);
    expect(bed.fake.requests).toHaveLength(3);
  });

  it("gives up after the configured retries", async () => {
    const session = await apiSession({ retries: 1 });
    bed.fake.script([
      { error: { status: 500, message: "down" } },
      { error: { status: 500, message: "still down" } },
    ]);
    const outcome = await (await session.prompt("x")).settled;
    expect(outcome.error).toEqual({
      code: "provider_error",
      message:
        'anthropic model "fake-model" answered HTTP 500: still down (after 2 attempts); it may pass: prompt again later, or raise config.options.retries (now 1)',
    });
  });

  it("fails on a broken stream and never retries text already shown", async () => {
    const session = await apiSession({ retries: 3 });
    bed.fake.script([{ text: "x".repeat(60), chunkSize: 2, delayMs: 5, breakAfter: 12 }]);
    const outcome = await (await session.prompt("x")).settled;
    expect(outcome).toMatchObject({ status: "failed", error: { code: "provider_error" } });
    expect(outcome.error?.message).toMatch(/^the stream of anthropic model "fake-model" broke off: /);
    const streamed = textOf(await events(session));
    if (streamed !== "") expect(bed.fake.requests).toHaveLength(1);
  });

  it("fails a request that sends nothing for idle_timeout_ms", async () => {
    const session = await apiSession({ retries: 0, idle_timeout_ms: 300 });
    bed.fake.script([{ hang: true }]);
    const outcome = await (await session.prompt("x")).settled;
    expect(outcome).toMatchObject({ status: "failed", error: { code: "provider_error" } });
    expect(outcome.error?.message).toBe(
      'anthropic model "fake-model" went quiet: nothing arrived for 0.3 s (config.options.idle_timeout_ms)',
    );
    await expect.poll(() => bed.fake.requests[0]?.aborted).toBe(true);
  });

  it("names an option with a bad value, and leaves other harnesses' options alone", async () => {
    const session = await apiSession({ max_steps: "three", working_dir: "/somewhere" });
    const outcome = await (await session.prompt("x")).settled;
    expect(outcome.error?.message).toMatch(/bad config.options for the api harness: max_steps: .*number/);
  });
});

describe("native state", () => {
  it("restores a checkpoint into a fresh dir so that the next request is identical", async () => {
    const session = await apiSession();
    bed.fake.script([
      { text: "checking", toolCalls: [{ name: "echo", arguments: { value: "v" } }] },
      { text: "one" },
    ]);
    await (await session.prompt("first")).settled;
    const manifest = await session.checkpoint();
    expect(manifest.files).toEqual([expect.objectContaining({ path: CONVERSATION_FILE, append_only: true })]);

    bed.fake.script([{ text: "two" }]);
    await (await session.prompt("second")).settled;
    const forked = await bed.current.brain.fork(session.id, manifest.id);
    bed.fake.script([{ text: "two again" }]);
    await (await forked.prompt("second")).settled;

    expect(bed.fake.requests).toHaveLength(4);
    expect(bed.fake.requests[3]!.body).toEqual(bed.fake.requests[2]!.body);
    expect(JSON.stringify(bed.fake.requests[3]!.body)).toContain("checking");
  });

  it("opens passively: reopening a saved conversation calls no model and no tool", async () => {
    const home = tempDir();
    const first = brain(home);
    const session = await first.brain.create({
      harness: "api",
      config: { model: "anthropic:fake-model", tools: ["echo"] },
    });
    await (await session.prompt("remember me")).settled;
    await first.brain.close();
    const second = brain(home);
    const reopened = await second.brain.session(session.id);
    await reopened.start();
    await reopened.checkpoint();
    expect(bed.fake.requests).toHaveLength(1);
    await (await reopened.prompt("do you?")).settled;
    expect(transcript(bed.fake.requests[1]!.body)).toEqual([
      "user: remember me",
      "assistant: echo: remember me",
      "user: do you?",
    ]);
    await second.cleanup();
    bed.forget();
  });

  it("fails the turn with brain_error when the conversation cannot be written", async () => {
    const session = await apiSession();
    await session.start();
    mkdirSync(join(bed.current.store.paths(session.id).native, CONVERSATION_FILE));
    const outcome = await (await session.prompt("x")).settled;
    expect(outcome).toMatchObject({ status: "failed", error: { code: "brain_error" } });
    expect(outcome.error?.message).toMatch(/could not write the conversation file: EISDIR/);
    expect(bed.fake.requests).toHaveLength(0);
  });

  it("skips a torn last line with a warning and keeps appending whole lines", async () => {
    const session = await apiSession();
    await (await session.prompt("one")).settled;
    const file = join(bed.current.store.paths(session.id).native, CONVERSATION_FILE);
    appendFileSync(file, '{"type":"message","mess');
    await bed.current.brain.close();
    const again = brain(bed.current.home);
    const reopened = await again.brain.session(session.id);
    await (await reopened.prompt("two")).settled;
    expect(warnings(await events(reopened))).toEqual([expect.stringMatching(/skipped 1 unreadable line/)]);
    const lines = readFileSync(file, "utf8").split("\n").filter(Boolean);
    expect(lines.filter((l) => l.startsWith('{"type":"message","mess"'))).toHaveLength(0);
    expect(lines.map((l) => l.startsWith("{") && l.endsWith("}"))).toContain(true);
    expect(transcript(bed.fake.requests[1]!.body).at(-1)).toBe("user: two");
  });

  it("compacts a conversation that grew past compact_at_tokens, as an appended summary", async () => {
    const session = await apiSession({ compact_at_tokens: 1000 });
    bed.fake.script([
      { text: "the answer is 42", usage: { input: 1500, output: 10 } },
      { text: "SUMMARY: the user asked a question; the answer was 42." },
      { text: "still 42" },
    ]);
    await (await session.prompt("what is the answer?")).settled;
    await (await session.prompt("remind me")).settled;
    const [, summarise, next] = bed.fake.requests;
    expect(transcript(summarise!.body).at(-1)).toBe(`user: ${SUMMARY_REQUEST}`);
    expect(summarise!.body.tool_choice).toEqual({ type: "none" });
    expect(transcript(next!.body)).toEqual([
      expect.stringMatching(/^user: \[The conversation so far was compacted.*SUMMARY: the user asked/s),
    ]);
    expect(JSON.stringify(next!.body)).not.toContain("what is the answer?");
    const file = readFileSync(join(bed.current.store.paths(session.id).native, CONVERSATION_FILE), "utf8");
    expect(file).toContain('"type":"compaction"');
    expect(file).toContain("what is the answer?");
    // The log keeps the summary too, so a rebuild or handoff can carry the conversation as the model saw it.
    expect(ofType(await events(session), "context.compacted")).toEqual([
      { summary: "SUMMARY: the user asked a question; the answer was 42." },
    ]);
  });
});

describe("tools", () => {
  it("answers unbound tools with an error result the model sees", async () => {
    const session = await apiSession();
    bed.fake.script([{ toolCalls: [{ name: "rm_rf", arguments: { path: "/" } }] }, { text: "sorry" }]);
    expect((await (await session.prompt("x")).settled).status).toBe("completed");
    const [result] = ofType(await events(session), "tool.result");
    expect(result).toMatchObject({ is_error: true, content: [{ text: expect.stringMatching(/not bound/) }] });
    expect(bed.fake.requests[1]!.body.messages[2].content[0]).toMatchObject({
      type: "tool_result",
      is_error: true,
    });
  });

  it("turns arguments that are not an object into an error result without calling Brain", () => {
    expect(toCallParams({ id: "c", name: "echo", input: "{broken" })).toBe(
      "the arguments of echo must be a JSON object; got: {broken",
    );
    expect(toCallParams({ id: "c", name: "echo", input: { value: 1 } })).toEqual({
      id: "c",
      name: "echo",
      arguments: { value: 1 },
    });
  });

  it("stops a runaway tool loop at max_steps", async () => {
    const session = await apiSession({ max_steps: 2 });
    bed.fake.setFallback(() => ({ toolCalls: [{ name: "echo", arguments: { value: "again" } }] }));
    try {
      const outcome = await (await session.prompt("loop")).settled;
      expect(outcome.status).toBe("completed");
    } finally {
      bed.fake.setFallback((req) => ({ text: `echo: ${req.seq}` }));
    }
    const all = await events(session);
    expect(bed.fake.requests).toHaveLength(2);
    expect(ofType(all, "assistant.message")).toEqual([expect.objectContaining({ stop_reason: "max_steps" })]);
    expect(warnings(all)).toEqual([expect.stringMatching(/stopped after 2 model requests/)]);
  });
});

describe("images", () => {
  const png = Buffer.from(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
    "base64",
  );

  it("sends images given by path or as base64, and keeps them in the conversation", async () => {
    const session = await apiSession();
    const path = join(tempDir(), "dot.png");
    writeFileSync(path, png);
    await (await session.prompt("what is this?", { images: [{ path }, { data: png.toString("base64") }] }))
      .settled;
    const content = bed.fake.requests[0]!.body.messages[0].content;
    expect(content).toEqual([
      { type: "text", text: "what is this?" },
      { type: "image", source: { type: "base64", media_type: "image/png", data: png.toString("base64") } },
      { type: "image", source: { type: "base64", media_type: "image/png", data: png.toString("base64") } },
    ]);
    expect(ofType(await events(session), "user.prompt")[0]).toEqual({
      text: "what is this?",
      images: [{ path }, { data: png.toString("base64") }],
    });
  });

  it("fails the turn on an image it cannot read, and refuses malformed input", async () => {
    const session = await apiSession();
    const outcome = await (await session.prompt("x", { images: [{ path: "/nonexistent/a.png" }] })).settled;
    expect(outcome.error?.message).toMatch(/image 1 \(\/nonexistent\/a.png\) cannot be read: ENOENT/);
    await expect(session.prompt("x", { images: [{ path: "a", data: "b" }] })).rejects.toThrow(
      /either data \(base64\) or path, not both/,
    );
    const text = Buffer.from("hello").toString("base64");
    const unknown = await (await session.prompt("x", { images: [{ data: text }] })).settled;
    expect(unknown.error?.message).toMatch(/not a PNG, JPEG, GIF or WebP image/);
  });

  it("is refused for a harness that takes no images", async () => {
    const t = bed.use(makeBrain());
    const session = await t.brain.create({ harness: "echo" });
    await expect(session.prompt("x", { images: [{ data: png.toString("base64") }] })).rejects.toThrow(
      /harness "echo" does not take images/,
    );
  });
});
