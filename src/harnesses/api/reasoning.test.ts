// What a model streams besides its answer, against the fake provider in each provider's wire format: its reasoning
// (kept for the next request, never shown as the answer), and several tool calls at once.
import { describe, expect, it } from "vitest";
import { events, makeBrain, textOf } from "../../testing/brain.js";
import { ApiHarnessFactory } from "./factory.js";
import { apiTestBed } from "./testing/bed.js";
import { baseUrlFor, FAKE_KEY } from "./testing/provider.js";

const bed = apiTestBed();

describe("anthropic thinking", () => {
  it("is not shown as the answer, and goes back with its signature in the turn's next request", async () => {
    const session = await bed.brain().brain.create({
      harness: "api",
      config: { model: "anthropic:fake-model", tools: ["echo"] },
    });
    const reasoning = { text: "The user wants an echo.", signature: "EqQBCkYIBxgCKkD-fake-signature" };
    bed.fake.script([
      { reasoning, text: "Echoing.", toolCalls: [{ name: "echo", arguments: { value: "hi" } }] },
      { reasoning: { text: "Done now.", signature: "sig-2" }, text: "It said hi." },
    ]);
    expect((await (await session.prompt("echo hi")).settled).status).toBe("completed");
    const all = await events(session);
    expect(textOf(all)).toBe("Echoing.It said hi.");
    expect(JSON.stringify(all)).not.toContain("The user wants an echo.");
    const assistant = bed.fake.requests[1]?.body.messages[1];
    expect(assistant.content[0]).toEqual({
      type: "thinking",
      thinking: reasoning.text,
      signature: reasoning.signature,
    });
    expect(assistant.content.map((part: { type: string }) => part.type)).toEqual([
      "thinking",
      "text",
      "tool_use",
    ]);
  });
});

describe.each(["openai-chat", "openrouter", "openai-compatible"])("%s: parallel tool calls", (provider) => {
  it("are assembled whole when their tool_calls[index] deltas alternate, and run in the order given", async () => {
    const session = await bed.brain({ provider }).brain.create({
      harness: "api",
      config: { model: `${provider}:fake-model`, tools: ["echo"] },
    });
    const values = ["the first call's argument", "and the second's, longer than the first"];
    const toolCalls = values.map((value) => ({ name: "echo", arguments: { value } }));
    bed.fake.script([{ text: "Two.", toolCalls, interleave: true, chunkSize: 3 }, { text: "Both done." }]);
    expect((await (await session.prompt("echo twice")).settled).status).toBe("completed");
    const all = await events(session);
    expect(textOf(all)).toBe("Two.Both done.");
    const calls = all.filter((e) => e.type === "tool.call").map((e) => e.data as { arguments: unknown });
    expect(calls.map((call) => call.arguments)).toEqual(values.map((value) => ({ value })));
    const results = bed.fake.requests[1]?.body.messages.filter((m: { role: string }) => m.role === "tool");
    expect(results.map((m: { content: string }) => m.content)).toEqual(values);
  });
});

describe.each(["openai", "openai-chat", "openrouter", "openai-compatible"])("%s: a refusal", (provider) => {
  it("is shown, not lost as an empty answer, and kept for the next request", async () => {
    const session = await bed.brain({ provider }).brain.create({
      harness: "api",
      config: { model: `${provider}:fake-model` },
    });
    const refusal = "I'm sorry, I can't help with that.";
    bed.fake.script([{ text: refusal, refusal: true, chunkSize: 5 }]);
    expect((await (await session.prompt("do the bad thing")).settled).status).toBe("completed");
    const all = await events(session);
    expect(textOf(all)).toBe(refusal);
    const [message] = all.filter((e) => e.type === "assistant.message").map((e) => e.data);
    expect(message).toMatchObject({ text: refusal });
    // The model's next request holds what the user was shown.
    await (await session.prompt("why not?")).settled;
    const { messages, input } = bed.fake.requests[1]?.body ?? {};
    expect(JSON.stringify(messages ?? input)).toContain(refusal);
  });
});

describe.each([
  ["openai", "o4-mini"],
  ["gemini", "fake-thinking-model"],
])("%s reasoning", (provider, model) => {
  it("is not shown as the answer, and goes back with its token across a tool round trip", async () => {
    const session = await bed.brain({ provider }).brain.create({
      harness: "api",
      config: { model: `${provider}:${model}`, tools: ["echo"] },
    });
    const reasoning = { text: "The user wants an echo.", signature: "gAAAA-fake-encrypted-reasoning" };
    bed.fake.script([
      { reasoning, text: "Echoing.", toolCalls: [{ name: "echo", arguments: { value: "hi" } }] },
      { reasoning: { text: "Done now.", signature: "sig-2" }, text: "It said hi." },
    ]);
    expect((await (await session.prompt("echo hi")).settled).status).toBe("completed");
    const all = await events(session);
    expect(textOf(all)).toBe("Echoing.It said hi.");
    expect(JSON.stringify(all)).not.toMatch(/The user wants an echo|Done now/);
    // Each provider's own shape: a reasoning item before the call, or the signature on the call's part.
    const body = bed.fake.requests[1]?.body;
    if (provider === "openai") {
      const kinds = body.input.map((item: { type?: string; role?: string }) => item.type ?? item.role);
      expect(kinds).toEqual(["user", "reasoning", "assistant", "function_call", "function_call_output"]);
      expect(body.input[1]).toMatchObject({ id: "rs_fake1", encrypted_content: reasoning.signature });
    } else {
      const parts = body.contents[1].parts;
      expect(parts[0]).toEqual({ text: reasoning.text, thought: true });
      expect(parts[2]).toMatchObject({
        functionCall: { name: "echo" },
        thoughtSignature: reasoning.signature,
      });
    }
  });

  it("keeps its token in a checkpoint: a fork's next request is the original's", async () => {
    const t = bed.brain({ provider });
    const session = await t.brain.create({
      harness: "api",
      config: { model: `${provider}:${model}`, tools: ["echo"] },
    });
    const reasoning = { text: "Thinking.", signature: "sig-kept-in-checkpoint" };
    bed.fake.script([
      { reasoning, toolCalls: [{ name: "echo", arguments: { value: "v" } }] },
      { text: "one" },
    ]);
    await (await session.prompt("first")).settled;
    const manifest = await session.checkpoint();
    bed.fake.script([{ text: "two" }]);
    await (await session.prompt("second")).settled;
    const forked = await t.brain.fork(session.id, manifest.id);
    bed.fake.script([{ text: "two again" }]);
    expect((await (await forked.prompt("second")).settled).status).toBe("completed");
    expect(bed.fake.requests[3]?.body).toEqual(bed.fake.requests[2]?.body);
    expect(JSON.stringify(bed.fake.requests[3]?.body)).toContain(reasoning.signature);
  });
});

describe("openai: options.reasoning", () => {
  it("asks a model the AI SDK does not know for its encrypted reasoning, which goes back across a tool call", async () => {
    const session = await bed.brain({ provider: "openai" }).brain.create({
      harness: "api",
      config: { model: "openai:fake-model", tools: ["echo"], options: { reasoning: true } },
    });
    const reasoning = { text: "The user wants an echo.", signature: "gAAAA-unknown-model-reasoning" };
    bed.fake.script([
      { reasoning, text: "Echoing.", toolCalls: [{ name: "echo", arguments: { value: "hi" } }] },
      { text: "It said hi." },
    ]);
    const settled = await (await session.prompt("echo hi")).settled;
    expect(settled.error?.message).toBeUndefined();
    expect(settled.status).toBe("completed");
    const [first, second] = bed.fake.requests.map((r) => r.body);
    const kinds = second.input.map((item: { type?: string; role?: string }) => item.type ?? item.role);
    expect(kinds).toEqual(["user", "reasoning", "assistant", "function_call", "function_call_output"]);
    expect(second.input[1]).toMatchObject({ encrypted_content: reasoning.signature });
    expect(first.include).toContain("reasoning.encrypted_content");
  });

  it("false keeps a model the SDK takes for a reasoning model from being asked", async () => {
    const session = await bed.brain({ provider: "openai" }).brain.create({
      harness: "api",
      config: { model: "openai:o4-mini", options: { reasoning: false } },
    });
    bed.fake.script([{ text: "Plain." }]);
    expect((await (await session.prompt("hi")).settled).status).toBe("completed");
    expect(bed.fake.requests[0]?.body.include ?? []).not.toContain("reasoning.encrypted_content");
  });

  it("may be set for every session of a configured provider, and a session's own option still wins", async () => {
    const t = bed.use(
      makeBrain({
        factories: [new ApiHarnessFactory()],
        providers: {
          custom: { base_url: baseUrlFor("openai", bed.fake), api_key_env: "CUSTOM_KEY", reasoning: true },
        },
        env: { CUSTOM_KEY: FAKE_KEY },
      }),
    );
    const asked = async (options?: { reasoning: boolean }) => {
      const session = await t.brain.create({
        harness: "api",
        provider: "custom",
        config: { model: "openai:fake-model", ...(options ? { options } : {}) },
      });
      bed.fake.reset();
      bed.fake.script([{ text: "Plain." }]);
      expect((await (await session.prompt("hi")).settled).status).toBe("completed");
      return (bed.fake.requests[0]?.body.include ?? []).includes("reasoning.encrypted_content");
    };
    expect(await asked()).toBe(true);
    expect(await asked({ reasoning: false })).toBe(false);
  });
});
