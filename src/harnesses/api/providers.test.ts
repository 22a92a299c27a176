// A tool-call turn on every provider, through the real AI SDK provider packages pointed at the fake provider
// (which checks the key each one sends), and the rules for model strings, keys and base URLs.
import { describe, expect, it } from "vitest";
import type { SessionEvent } from "../../protocol/events.js";
import { events, makeBrain, textOf } from "../../testing/brain.js";
import { ApiHarnessFactory } from "./factory.js";
import { parseModelSpec, resolveModel } from "./providers.js";
import { apiTestBed } from "./testing/bed.js";
import { FAKE_KEY, PROVIDER_FORMATS } from "./testing/provider.js";

const bed = apiTestBed();

const data = (all: SessionEvent[], type: string) =>
  all.filter((e) => e.type === type).map((e) => e.data as Record<string, unknown>);

describe.each(Object.entries(PROVIDER_FORMATS))("%s", (provider, format) => {
  it("runs a tool-call turn: deltas, the bound tool through Brain, the answer with usage", async () => {
    const t = bed.brain({ provider });
    const session = await t.brain.create({
      harness: "api",
      config: { model: `${provider}:fake-model`, system_prompt: "be brief", tools: ["echo"] },
    });
    bed.fake.script([
      {
        text: "Let me echo.",
        toolCalls: [{ name: "echo", arguments: { value: "ünïcode 🏓" } }],
        usage: { input: 20, output: 5 },
      },
      { text: "It said ünïcode 🏓.", chunkSize: 3, usage: { input: 40, output: 6 } },
    ]);
    const outcome = await (await session.prompt("echo something")).settled;
    expect(outcome).toMatchObject({ status: "completed" });

    const all = await events(session);
    expect(textOf(all)).toBe("Let me echo.It said ünïcode 🏓.");
    const [call] = data(all, "tool.call");
    expect(call).toMatchObject({ name: "echo", arguments: { value: "ünïcode 🏓" } });
    expect(data(all, "tool.result")).toEqual([
      { id: call?.id, content: [{ type: "text", text: "ünïcode 🏓" }], is_error: false },
    ]);
    const [message] = data(all, "assistant.message");
    expect(message).toMatchObject({ text: "It said ünïcode 🏓.", stop_reason: "stop" });
    expect(message?.usage).toMatchObject({ input: 60, output: 11 });

    expect(bed.fake.requests.map((r) => r.format)).toEqual([format, format]);
    const second = JSON.stringify(bed.fake.requests[1]?.body);
    expect(second).toContain("ünïcode 🏓");
    expect(second).toContain("be brief");
    expect(second).toContain("echo something");
    // The whole conversation is sent each time (no references to provider-stored items).
    expect(second).toContain("Let me echo.");
    expect(second).not.toContain("item_reference");
  });

  it("fails a stream that ends before the model finished, instead of taking the cut answer as whole", async () => {
    const session = await bed.brain({ provider }).brain.create({
      harness: "api",
      config: { model: `${provider}:fake-model`, options: { retries: 0 } },
    });
    bed.fake.script([{ text: "The answer is forty-two.", chunkSize: 4, endAfter: 3 }]);
    const outcome = await (await session.prompt("the answer?")).settled;
    expect(outcome).toMatchObject({ status: "failed", error: { code: "provider_error" } });
    // openai-compatible's own SDK package already says so, in its words.
    expect(outcome.error?.message).toMatch(
      /stream ended (before the model finished|without a finish reason)/,
    );
  });
  it("fails a stream the provider breaks off with an error of its own, naming it, and keeps the text shown", async () => {
    const session = await bed.brain({ provider }).brain.create({
      harness: "api",
      config: { model: `${provider}:fake-model`, options: { retries: 0 } },
    });
    // Six frames in, every format has streamed some of the text and none has finished it.
    const streamError = { after: 6, message: "The service is temporarily overloaded." };
    bed.fake.script([{ text: "a".repeat(40), chunkSize: 2, streamError }, { text: "ok" }]);
    const outcome = await (await session.prompt("go")).settled;
    expect(outcome).toMatchObject({ status: "failed", error: { code: "provider_error" } });
    expect(outcome.error?.message).toContain("The service is temporarily overloaded.");
    expect(outcome.error?.message).not.toContain("[object Object]");
    const shown = textOf(await events(session));
    expect(shown).toMatch(/^a+$/);
    await (await session.prompt("again")).settled;
    expect(JSON.stringify(bed.fake.requests[1]?.body)).toContain(shown);
  });
});

describe("model strings", () => {
  it("splits provider:model at the first colon, with aliases", () => {
    expect(parseModelSpec("anthropic:claude-x")).toEqual({ provider: "anthropic", modelId: "claude-x" });
    expect(parseModelSpec("ollama:llama3.2:3b")).toEqual({ provider: "ollama", modelId: "llama3.2:3b" });
    expect(parseModelSpec("openrouter:anthropic/claude")).toEqual({
      provider: "openrouter",
      modelId: "anthropic/claude",
    });
    expect(parseModelSpec("google:gemini-x").provider).toBe("gemini");
    expect(parseModelSpec("gpt-x", "openai-chat")).toEqual({ provider: "openai-chat", modelId: "gpt-x" });
    // With the provider given apart (an agent definition's harness.provider), a colon may be the model's.
    expect(parseModelSpec("llama3.2:3b", "ollama")).toEqual({ provider: "ollama", modelId: "llama3.2:3b" });
    expect(parseModelSpec("anthropic:claude-x", "ollama").provider).toBe("anthropic");
  });

  it("refuses what it cannot place, saying what to write", () => {
    expect(() => parseModelSpec(undefined)).toThrow(/needs config.model as "provider:model"/);
    expect(() => parseModelSpec("claude-x")).toThrow(/names no provider.*providers: anthropic, openai/);
    expect(() => parseModelSpec("mistral:large")).toThrow(/unknown provider "mistral"/);
    expect(() => parseModelSpec("anthropic:")).toThrow(/names no model/);
  });
});

describe("a gemini model id, which goes into the request's URL", () => {
  it("keeps to plain path segments, so a client's model cannot send the key to another path of the host", async () => {
    expect(parseModelSpec("gemini:gemini-2.5-flash-001").modelId).toBe("gemini-2.5-flash-001");
    expect(parseModelSpec("gemini:tunedModels/my_model-1.2").modelId).toBe("tunedModels/my_model-1.2");
    for (const bad of ["../../admin/keys#", "x?alt=json", "models/../../x", "a%2F..", "a/b/c", ".."]) {
      expect(() => parseModelSpec(`gemini:${bad}`)).toThrow(
        /a gemini model id goes into the request's URL, so it may hold only letters, digits/,
      );
    }
    // In a request body, the other providers' model ids may hold what their servers take.
    expect(parseModelSpec("ollama:hf.co/user/model:Q4").modelId).toBe("hf.co/user/model:Q4");

    const session = await bed.brain({ provider: "gemini" }).brain.create({
      harness: "api",
      config: { model: "gemini:../../admin/delete#", options: { retries: 0 } },
    });
    const outcome = await (await session.prompt("hi")).settled;
    expect(outcome).toMatchObject({ status: "failed", error: { code: "brain_error" } });
    expect(outcome.error?.message).toMatch(/goes into the request's URL/);
    expect(bed.fake.requests).toEqual([]);
  });
});

describe("keys and base URLs", () => {
  it("names the variable to set when a key is missing", () => {
    expect(() => resolveModel("anthropic:x", {}, {})).toThrow(/set ANTHROPIC_API_KEY, or name the variable/);
    expect(() => resolveModel("gemini:x", {}, {})).toThrow(
      /set GEMINI_API_KEY \(or GOOGLE_GENERATIVE_AI_API_KEY or GOOGLE_API_KEY\)/,
    );
    expect(() => resolveModel("openrouter:x", {}, {})).toThrow(/OPENROUTER_API_KEY/);
    expect(() => resolveModel("openai-compatible:x", {}, {})).toThrow(
      /needs a base URL: set provider.base_url/,
    );
    // Ollama runs locally without a key.
    expect(resolveModel("ollama:x", {}, {}).provider).toBe("ollama");
  });

  it("takes Brain's credentials over the usual variables, and the variables otherwise", async () => {
    bed.fake.script([{ text: "from env" }, { text: "from creds" }, { text: "from OLLAMA_HOST" }]);
    const base = `${bed.fake.url}/v1`;
    const read = async (model: ReturnType<typeof resolveModel>) => {
      const { streamText } = await import("ai");
      const result = streamText({ model: model.model, prompt: "hi", maxRetries: 0 });
      return result.text;
    };
    // ANTHROPIC_BASE_URL is the host without /v1 (as Claude Code takes it): /v1 is added.
    const env = { ANTHROPIC_API_KEY: FAKE_KEY, ANTHROPIC_BASE_URL: bed.fake.url };
    expect(await read(resolveModel("anthropic:x", {}, env))).toBe("from env");
    const creds = { api_key: FAKE_KEY, base_url: base };
    const wrongEnv = { ANTHROPIC_API_KEY: "wrong", ANTHROPIC_BASE_URL: "http://127.0.0.1:1" };
    expect(await read(resolveModel("anthropic:x", creds, wrongEnv))).toBe("from creds");
    // OLLAMA_HOST may be a bare host:port, as the ollama CLI takes it.
    const host = bed.fake.url.replace("http://", "");
    expect(await read(resolveModel("ollama:x", {}, { OLLAMA_HOST: host, OLLAMA_API_KEY: FAKE_KEY }))).toBe(
      "from OLLAMA_HOST",
    );
    expect(bed.fake.requests.map((r) => r.path)).toEqual(["/v1/messages", "/v1/messages", "/api/chat"]);
  });
});

describe("a session with no provider", () => {
  it("fails saying where the missing key should come from", async () => {
    // A host that lends its environment (the operator's `brain run`) names the variable; a daemon lends none.
    const failure = async (providerEnv?: NodeJS.ProcessEnv) => {
      const t = makeBrain({ factories: [new ApiHarnessFactory()], ...(providerEnv ? { providerEnv } : {}) });
      try {
        const session = await t.brain.create({ harness: "api", config: { model: "anthropic:claude-x" } });
        return (await (await session.prompt("x")).settled).error?.message;
      } finally {
        await t.cleanup();
      }
    };
    expect(await failure({})).toMatch(/no API key for anthropic: set ANTHROPIC_API_KEY/);
    expect(await failure()).toMatch(
      /no API key for anthropic: this session's key can come only from its provider/,
    );
  });
});

describe("a session with a provider takes its key and base URL from it alone", () => {
  const HOST_KEY = "sk-host-openai-key-0123456789";
  const hostEnv = { OPENAI_API_KEY: HOST_KEY, OPENAI_BASE_URL: "http://127.0.0.1:1/v1" };

  it("reads no variable without an environment to read, and says to name a provider", () => {
    expect(() => resolveModel("openai:x", {}, undefined)).toThrow(
      /no API key for openai: this session's key can come only from its provider; use a provider whose api_key_env/,
    );
    expect(() => resolveModel("openai-chat:x", { base_url: "http://127.0.0.1:1/v1" }, undefined)).toThrow(
      /no API key for openai-chat/,
    );
    expect(() => resolveModel("openai-compatible:x", {}, undefined)).toThrow(
      /needs a base URL: set provider.base_url in brain.config.json$/,
    );
  });

  it("refuses a model prefix of another vendor than the provider's api, naming what to write", () => {
    const anthropic = { api: "anthropic", api_key: "sk-ant-configured", base_url: "http://127.0.0.1:1" };
    expect(() => resolveModel("openai:gpt-4o", anthropic, undefined)).toThrow(
      /model "openai:gpt-4o" asks for openai, but the session's provider speaks "anthropic".*"anthropic:<model>"/,
    );
    expect(() => resolveModel("openai:gpt-4o", { api: "ollama" }, undefined)).toThrow(/speaks "ollama"/);
    expect(() => resolveModel("x", { api: "messages" }, undefined)).toThrow(/unknown provider "messages"/);
    // The prefix may choose the wire among the provider's own vendor's APIs (OpenAI's Responses or Chat).
    const openai = { api: "openai", api_key: "sk-configured", base_url: "http://127.0.0.1:1/v1" };
    expect(resolveModel("openai-chat:gpt-4o", openai, undefined).provider).toBe("openai-chat");
    expect(resolveModel("google:gemini-x", { ...openai, api: "gemini" }, undefined).provider).toBe("gemini");
    // Without an api, a base URL fixes where the key goes and the prefix picks only the wire.
    const bare = { api_key: "sk-configured", base_url: "http://127.0.0.1:1/v1" };
    expect(resolveModel("anthropic:claude-x", bare, undefined).provider).toBe("anthropic");
    expect(() => resolveModel("anthropic:claude-x", { api_key: "sk-configured" }, undefined)).toThrow(
      /gives a key but no "api" or "base_url", so model "anthropic:claude-x" alone would choose/,
    );
  });

  it("keeps the usual variables for the operator's own session naming no provider, never for a provider's", async () => {
    const t = bed.use(
      makeBrain({
        factories: [new ApiHarnessFactory()],
        providerEnv: { ...hostEnv, ANTHROPIC_API_KEY: FAKE_KEY, ANTHROPIC_BASE_URL: bed.fake.url },
        env: {},
        providers: { local: { base_url: `${bed.fake.url}/v1` } },
      }),
    );
    bed.fake.script([{ text: "from the environment" }]);
    const bare = await t.brain.create({ harness: "api", config: { model: "anthropic:x" } });
    expect(await (await bare.prompt("hi")).settled).toMatchObject({ status: "completed" });
    const named = await t.brain.create({
      harness: "api",
      provider: "local",
      config: { model: "openai-chat:x", options: { retries: 0 } },
    });
    const outcome = await (await named.prompt("hi")).settled;
    expect(outcome).toMatchObject({ status: "failed" });
    expect(JSON.stringify(outcome)).toContain("can come only from its provider");
    expect(bed.fake.requests.map((r) => r.path)).toEqual(["/v1/messages"]);
    expect(JSON.stringify(bed.fake.requests)).not.toContain(HOST_KEY);
  });
});
