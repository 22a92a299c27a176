// runners/pi through Brain, against the fake provider in each of the three wire formats it speaks: a tool call
// then text, steering mid-turn, interrupt mid-stream, provider errors, and checkpoint → fork → the same request.
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { SessionEvent } from "../../src/protocol/events.js";
import { events, type TestBrain, tempDir, textOf, waitForEvent } from "../../src/testing/brain.js";
import { startFakeProvider } from "../../src/testing/fake-provider/index.js";
import {
  API_KEY,
  bodyText,
  FORMATS,
  piBrain,
  requestShape,
  transcript,
  usePiBed,
  WaitTool,
} from "./helpers.js";

let t: TestBrain;
const bed = usePiBed();

const ofType = (all: SessionEvent[], type: SessionEvent["type"]) =>
  all.filter((e) => e.type === type).map((e) => e.data as Record<string, unknown>);

const slowText = (words: number) => Array.from({ length: words }, (_, i) => `word${i} `).join("");

describe.each(FORMATS)("runners/pi on $api", (format) => {
  const config = { model: format.model, tools: ["echo"], system_prompt: "You are terse." };

  it("runs a turn with a tool call through Brain, then answers with text", async () => {
    t = bed.brain(format);
    bed.fake.script([
      { toolCalls: [{ name: "echo", arguments: { value: "ping" } }] },
      { text: "The tool said ping." },
    ]);
    const session = await t.brain.create({ harness: "pi", config });
    const turn = await session.prompt("Call the echo tool with ping.");
    expect(await turn.settled).toEqual({ turn: turn.turn, status: "completed" });

    const all = await events(session);
    expect(ofType(all, "tool.call")).toEqual([
      { id: expect.any(String), name: "echo", arguments: { value: "ping" } },
    ]);
    expect(ofType(all, "tool.result")).toMatchObject([
      { content: [{ type: "text", text: "ping" }], is_error: false },
    ]);
    expect(textOf(all)).toBe("The tool said ping.");
    const messages = ofType(all, "assistant.message");
    expect(messages.map((m) => m.stop_reason)).toEqual(["tool_use", "stop"]);
    expect(messages[1]).toMatchObject({
      text: "The tool said ping.",
      usage: { input: expect.any(Number), output: expect.any(Number), cache_read: 0, cache_write: 0 },
    });
    expect((messages[1]!.usage as { input: number }).input).toBeGreaterThan(0);

    // Two model requests to the right endpoint with the open frame's key; the second carries the tool result.
    expect(bed.fake.requests.map((r) => r.path)).toEqual([format.path, format.path]);
    const auth = `${bed.fake.requests[0]!.headers.authorization ?? ""} ${bed.fake.requests[0]!.headers["x-api-key"] ?? ""}`;
    expect(auth).toContain(API_KEY);
    expect(bodyText(bed.fake.requests[0])).toContain("You are terse.");
    expect(bodyText(bed.fake.requests[0])).toContain('"echo"');
    expect(bodyText(bed.fake.requests[1])).toContain("ping");
    if (format.api === "anthropic-messages") {
      // The host's whole schema, not pi-ai's {type, properties, required} cut-down.
      expect(bed.fake.requests[0]!.body.tools[0].input_schema).toMatchObject({ additionalProperties: false });
    }
  });

  it("passes a call with bad arguments, or of an unbound tool, to Brain, which logs it and answers the model", async () => {
    t = bed.brain(format);
    bed.fake.script([
      {
        toolCalls: [
          { name: "echo", arguments: { value: 42, extra: true } },
          { name: "nosuch", arguments: { x: 1 } },
        ],
      },
      { text: "Both calls failed." },
    ]);
    const session = await t.brain.create({ harness: "pi", config });
    const turn = await session.prompt("Call echo badly, then a tool you do not have.");
    expect(await turn.settled).toEqual({ turn: turn.turn, status: "completed" });

    const all = await events(session);
    // The model's own arguments, not pi's coercion of them ("42").
    expect(ofType(all, "tool.call")).toEqual([
      { id: expect.any(String), name: "echo", arguments: { value: 42, extra: true } },
      { id: expect.any(String), name: "nosuch", arguments: { x: 1 } },
    ]);
    // Each call's result (they run side by side, so they may be logged in either order).
    const calls = ofType(all, "tool.call");
    const results = calls.map((c) => ofType(all, "tool.result").find((r) => r.id === c.id));
    expect(results).toMatchObject([{ is_error: true }, { is_error: true }]);
    expect(JSON.stringify(results[0])).toContain('invalid arguments for tool \\"echo\\"');
    expect(JSON.stringify(results[1])).toContain('tool \\"nosuch\\" is not bound to this session');
    const second = bodyText(bed.fake.requests[1]);
    expect(second).toContain("invalid arguments for tool");
    expect(second).toContain("is not bound to this session");
    expect(second).not.toContain("Validation failed");
    // The model is offered the bound schema, not the permissive one pi checks against, and never the unbound tool.
    expect(bodyText(bed.fake.requests[0])).toContain('"value"');
    for (const request of bed.fake.requests)
      expect(JSON.stringify(request.body.tools)).not.toContain("nosuch");
  });

  it("lets a steer join the running turn at the next model boundary", async () => {
    t = bed.brain(format);
    // About two seconds of streaming: the steer arrives while it runs, even on a busy machine.
    bed.fake.script([{ text: slowText(120), chunkSize: 5, delayMs: 12 }, { text: "Going left now." }]);
    const session = await t.brain.create({ harness: "pi", config });
    const turn = await session.prompt("Walk somewhere.");
    await waitForEvent(session, (e) => e.type === "assistant.delta");
    await session.steer("Go left instead.");
    expect((await turn.settled).status).toBe("completed");

    // The first reply was not cut off; the steer went to the model in the same turn, after that reply.
    expect(bed.fake.requests).toHaveLength(2);
    const second = bodyText(bed.fake.requests[1]);
    expect(second).toContain("word119");
    expect(second.indexOf("Go left instead.")).toBeGreaterThan(second.indexOf("word119"));
    const all = await events(session);
    expect(all.filter((e) => e.type === "user.steer" && e.turn === turn.turn)).toHaveLength(1);
    expect(textOf(all)).toContain("Going left now.");
    expect(transcript(t, session).filter((e) => e.type === "message")).toHaveLength(4);
  });

  it("interrupts mid-stream: the request is aborted, the turn settles interrupted, the next turn works", async () => {
    t = bed.brain(format);
    bed.fake.script([{ text: slowText(300), chunkSize: 6, delayMs: 20 }]);
    const session = await t.brain.create({ harness: "pi", config });
    const turn = await session.prompt("Tell me a long story.");
    await waitForEvent(session, (e) => e.type === "assistant.delta");
    await session.interrupt();
    expect((await turn.settled).status).toBe("interrupted");
    await expect.poll(() => bed.fake.requests[0]?.aborted).toBe(true);
    expect(textOf(await events(session))).not.toContain("word299");
    const interrupted = ofType(await events(session), "assistant.message");
    expect(interrupted.at(-1)).toMatchObject({ stop_reason: "interrupted" });

    const next = await session.prompt("Short answer now.");
    expect((await next.settled).status).toBe("completed");
    expect(bed.fake.requests).toHaveLength(2);
    // pi never sends an aborted reply back to the model; the prompt it answered is still there.
    expect(bodyText(bed.fake.requests[1])).not.toContain("word0");
    expect(bodyText(bed.fake.requests[1])).toContain("Tell me a long story.");
    // The native file is still whole JSONL.
    expect(transcript(t, session).at(-1)).toMatchObject({ type: "message", message: { role: "assistant" } });
  });

  it("interrupts while a tool call waits: the call is cancelled and no request follows the interrupt", async () => {
    t = bed.brain(format, { tools: [new WaitTool()] });
    bed.fake.script([{ toolCalls: [{ name: "wait", arguments: {} }] }, { text: "never asked for" }]);
    const session = await t.brain.create({ harness: "pi", config: { ...config, tools: ["wait"] } });
    const first = await session.checkpoint();
    const turn = await session.prompt("Wait for it.");
    await waitForEvent(session, (e) => e.type === "tool.call");
    await session.interrupt();
    expect((await turn.settled).status).toBe("interrupted");
    expect(bed.fake.requests).toHaveLength(1);
    expect(session.pendingRequests()).toEqual([]);
    // The native file only grew, and holds the cancelled call's error result for the model to see next time.
    const after = await session.checkpoint();
    expect(after.files[0]!.size).toBeGreaterThan(first.files[0]?.size ?? 0);
    const results = transcript(t, session).filter(
      (e) => (e.message as { role?: string } | undefined)?.role === "toolResult",
    );
    expect(results).toMatchObject([{ message: { isError: true } }]);
  });

  it("fails the turn with provider_error and the provider's message, and goes on after", async () => {
    t = bed.brain(format);
    bed.fake.script([
      { error: { status: 400, message: "model fake-model does not exist here", retry: false } },
    ]);
    const session = await t.brain.create({ harness: "pi", config });
    const outcome = await (await session.prompt("Hello?")).settled;
    expect(outcome).toMatchObject({ status: "failed", error: { code: "provider_error" } });
    expect(outcome.error?.message).toContain("does not exist here");
    expect((await (await session.prompt("Hello again.")).settled).status).toBe("completed");
  });

  it("keeps the key a provider's error echoes out of its transcript, so the session still checkpoints", async () => {
    // A gateway's 401 quoting the key it was sent: the transcript kept the reply's errorMessage whole, and the
    // checkpoint secret scan then refused every checkpoint (and so fork) of the session until a rebuild.
    t = bed.brain(format);
    const echoed = `Incorrect API key provided: ${API_KEY} (${Buffer.from(API_KEY).toString("base64")})`;
    bed.fake.script([{ error: { status: 401, message: echoed, retry: false } }]);
    const session = await t.brain.create({ harness: "pi", config });
    const outcome = await (await session.prompt("Hello?")).settled;
    expect(outcome).toMatchObject({ status: "failed", error: { code: "provider_error" } });
    expect(JSON.stringify(transcript(t, session))).not.toContain(API_KEY);
    expect(JSON.stringify(transcript(t, session))).toContain("Incorrect API key provided");
    expect((await session.checkpoint()).files).toHaveLength(1);
  });

  it("names the endpoint it could not reach in the turn's provider_error", async () => {
    const down = await startFakeProvider();
    const baseUrl = format.baseUrl(down);
    await down.close();
    t = bed.brain(format, { provider: { base_url: baseUrl } });
    const session = await t.brain.create({ harness: "pi", config });
    const outcome = await (await session.prompt("Hello?")).settled;
    expect(outcome).toMatchObject({ status: "failed", error: { code: "provider_error" } });
    expect(outcome.error?.message).toContain(baseUrl);
  });

  it("checkpoints, and a fork (or a restore) sends the provider exactly the request the original would", async () => {
    t = bed.brain(format);
    bed.fake.script([
      { toolCalls: [{ name: "echo", arguments: { value: "abc" } }] },
      { text: "Echoed abc." },
    ]);
    const session = await t.brain.create({ harness: "pi", config });
    await (await session.prompt("Echo abc, please.")).settled;
    await (await session.prompt("Thanks. And now?")).settled;
    const checkpoint = await session.checkpoint();
    expect(checkpoint.files).toEqual([
      expect.objectContaining({ path: "conversation.jsonl", append_only: true, size: expect.any(Number) }),
    ]);

    // Restore: the native file, byte for byte, into a fresh dir.
    const native = join(t.store.paths(session.id).native, "conversation.jsonl");
    const restored = tempDir("pi-restore-");
    await t.brain.restore(session.id, checkpoint.id, restored);
    expect(readFileSync(join(restored, "conversation.jsonl"))).toEqual(readFileSync(native));
    rmSync(restored, { recursive: true, force: true });

    // Fork: opening it is passive, and its next request equals the original's.
    const fork = await t.brain.fork(session.id, checkpoint.id);
    bed.fake.reset();
    await fork.start();
    expect(bed.fake.requests).toHaveLength(0);
    await (await session.prompt("What did we do?")).settled;
    const original = bed.fake.requests.map(requestShape);
    bed.fake.reset();
    await (await fork.prompt("What did we do?")).settled;
    const forked = bed.fake.requests.map(requestShape);
    expect(original).toHaveLength(1);
    expect(forked).toEqual(original);
    expect(JSON.stringify(original)).toContain("Echoed abc.");
  });
});

describe("runners/pi without a key", () => {
  it.each(FORMATS.filter((f) => f.api !== "openai-responses"))(
    "sends no auth header at all to a keyless $api endpoint",
    async (format) => {
      const open = await startFakeProvider();
      const own = piBrain(open, format, { provider: { api_key: undefined } });
      try {
        const session = await own.brain.create({ harness: "pi", config: { model: format.model } });
        expect((await (await session.prompt("hi")).settled).status).toBe("completed");
        expect(open.requests[0]!.headers.authorization).toBeUndefined();
        expect(open.requests[0]!.headers["x-api-key"]).toBeUndefined();
      } finally {
        await own.cleanup();
        await open.close();
      }
    },
  );

  it("refuses to open without a model or a base URL it can use, with a brain_error that says why", async () => {
    t = bed.brain(FORMATS[0]!, { provider: { base_url: undefined } });
    const noModel = await t.brain.create({ harness: "pi", config: {} });
    await expect(noModel.start()).rejects.toThrow(/config\.model/);
    const noUrl = await t.brain.create({ harness: "pi", config: { model: "local/llama" } });
    const outcome = await (await noUrl.prompt("hi")).settled;
    expect(outcome).toMatchObject({ status: "failed", error: { code: "brain_error" } });
    expect(outcome.error?.message).toMatch(/provider\.base_url/);
  });
});

describe("runners/pi on an OpenAI-compatible server", () => {
  it("runs a tool call the server sent without an id (pi-ai reads it as ''): Brain logs it under a fresh one", async () => {
    const format = FORMATS[0]!;
    t = bed.brain(format);
    bed.fake.script([
      { toolCalls: [{ id: "", name: "echo", arguments: { value: "ping" } }] },
      { text: "done" },
    ]);
    const session = await t.brain.create({ harness: "pi", config: { model: format.model, tools: ["echo"] } });
    const turn = await session.prompt("Call the echo tool with ping.");
    expect(await turn.settled).toEqual({ turn: turn.turn, status: "completed" });
    const all = await events(session);
    expect(ofType(all, "tool.call")).toEqual([
      { id: expect.stringMatching(/^call_/), name: "echo", arguments: { value: "ping" } },
    ]);
    expect(textOf(all)).toBe("done");
  });
});
