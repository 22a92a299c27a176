// runners/pi's pieces on their own: settings from the open frame, usage mapping, compaction choices and the
// transcript's rebuild of the context.
import { appendFileSync, readFileSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import type { AssistantMessage, Message } from "@mariozechner/pi-ai";
import { afterAll, describe, expect, it } from "vitest";
import { chooseCut, contextTokens, needsCompaction } from "../../runners/pi/compaction.js";
import { messageEvent, toUsage } from "../../runners/pi/events.js";
import { readSettings, resolveApi, resolveBaseUrl } from "../../runners/pi/settings.js";
import { TRANSCRIPT, Transcript } from "../../runners/pi/transcript.js";
import type { OpenParams } from "../../src/protocol/runner.js";
import { tempDir } from "../../src/testing/brain.js";

const params = (over: Partial<OpenParams> = {}): OpenParams => ({
  session_id: "s",
  dir: "native-dir-unused",
  config: { model: "openai/gpt-test" },
  tools: [],
  provider: { base_url: "http://127.0.0.1:9/v1", api_key: "k" },
  ...over,
});

const usage = (input: number, output = 10, cacheRead = 0, cacheWrite = 0) => ({
  input,
  output,
  cacheRead,
  cacheWrite,
  totalTokens: input + output + cacheRead + cacheWrite,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
});

function assistant(text: string, over: Partial<AssistantMessage> = {}): AssistantMessage {
  return {
    role: "assistant",
    content: [{ type: "text", text }],
    api: "openai-completions",
    provider: "brain",
    model: "m",
    usage: usage(100),
    stopReason: "stop",
    timestamp: 1,
    ...over,
  };
}
const user = (text: string): Message => ({ role: "user", content: [{ type: "text", text }], timestamp: 1 });
const toolCall = (id: string): AssistantMessage =>
  assistant("", {
    content: [{ type: "toolCall", id, name: "echo", arguments: { value: "x".repeat(400) } }],
    stopReason: "toolUse",
  });
const toolResult = (id: string): Message => ({
  role: "toolResult",
  toolCallId: id,
  toolName: "echo",
  content: [{ type: "text", text: "x".repeat(400) }],
  isError: false,
  timestamp: 1,
});

describe("runners/pi settings", () => {
  it("takes the wire format from provider.api (pi-ai's names or an alias), else from the model's prefix", () => {
    expect(resolveApi("openai-responses", "openai")).toBe("openai-responses");
    expect(resolveApi("openai-chat", "x")).toBe("openai-completions");
    expect(resolveApi("anthropic", "x")).toBe("anthropic-messages");
    expect(resolveApi(undefined, "anthropic")).toBe("anthropic-messages");
    expect(resolveApi(undefined, "openrouter")).toBe("openai-completions");
    expect(() => resolveApi("gemini", "google")).toThrow(/not supported.*openai-completions/);
  });

  it("normalizes base URLs, dropping /v1 for Anthropic, and defaults only to the vendor the prefix names", () => {
    expect(resolveBaseUrl("http://h:1/v1/", "openai-completions", "x")).toBe("http://h:1/v1");
    expect(resolveBaseUrl("http://h:1/v1", "anthropic-messages", "x")).toBe("http://h:1");
    expect(resolveBaseUrl(undefined, "openai-completions", "openai")).toBe("https://api.openai.com/v1");
    expect(resolveBaseUrl("", "anthropic-messages", "anthropic")).toBe("https://api.anthropic.com");
    expect(() => resolveBaseUrl(undefined, "openai-completions", "ollama")).toThrow(/base_url/);
    expect(() => resolveBaseUrl("file:///etc", "openai-completions", "x")).toThrow(/http/);
  });

  it("builds the model from provider/model and the options, and says which options are wrong", () => {
    const s = readSettings(
      params({ config: { model: "openai/org/model-1", options: { context_window: 10_000, delay_ms: 5 } } }),
    );
    expect(s.model).toMatchObject({
      id: "org/model-1",
      api: "openai-completions",
      provider: "brain",
      contextWindow: 10_000,
    });
    expect(s.compaction).toMatchObject({ enabled: true, threshold: 0.8, keepTokens: 2_000 });
    expect(s.ignoredOptions).toEqual(["delay_ms"]);
    expect(() =>
      readSettings(params({ config: { model: "m", options: { compaction_threshold: 2 } } })),
    ).toThrow(/options\.compaction_threshold/);
    expect(() => readSettings(params({ config: {} }))).toThrow(/config\.model/);
  });

  it("sends a key to a vendor's own URL only when the provider's api names that vendor", () => {
    const vendorOnly = (provider: OpenParams["provider"], model: string) =>
      readSettings(params({ provider, config: { model } })).model.baseUrl;
    expect(vendorOnly({ api: "anthropic", api_key: "k" }, "anthropic/claude")).toBe(
      "https://api.anthropic.com",
    );
    expect(() => vendorOnly({ api: "anthropic", api_key: "k" }, "openai/gpt-4o")).toThrow(/base_url/);
    // A key that names no vendor: the client's prefix would pick where it goes.
    expect(() => vendorOnly({ api_key: "k" }, "openai/gpt-4o")).toThrow(
      /neither "api" nor "base_url".*set the provider's api/,
    );
    // Without a key nothing is sent that the prefix could misdirect.
    expect(vendorOnly({}, "openai/gpt-4o")).toBe("https://api.openai.com/v1");
  });
});

describe("runners/pi events", () => {
  it("reports usage with cache tokens, and cost only when it is known", () => {
    expect(toUsage(usage(120, 30, 1_000, 64))).toEqual({
      input: 120,
      output: 30,
      cache_read: 1_000,
      cache_write: 64,
    });
    const priced = { ...usage(1), cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0.25 } };
    expect(toUsage(priced).cost).toBe(0.25);
  });

  it("maps stop reasons and leaves out the empty placeholder of a failed request", () => {
    expect(messageEvent(toolCall("c"))).toMatchObject({ text: "", stop_reason: "tool_use" });
    expect(messageEvent(assistant("half", { stopReason: "aborted" }))).toMatchObject({
      stop_reason: "interrupted",
    });
    expect(messageEvent(assistant("", { stopReason: "aborted", usage: usage(0, 0) }))).toBeUndefined();
  });
});

describe("runners/pi compaction choices", () => {
  it("measures the context from the last successful reply's usage", () => {
    const messages = [
      user("a"),
      assistant("b", { usage: usage(900, 50, 40) }),
      assistant("", { stopReason: "error" }),
    ];
    expect(contextTokens(messages)).toBe(990);
    const settings = { enabled: true, threshold: 0.5, keepTokens: 10, contextWindow: 2_000 };
    expect(needsCompaction(messages, settings)).toBe(false);
    expect(needsCompaction(messages, { ...settings, contextWindow: 1_900 })).toBe(true);
    expect(needsCompaction(messages, { ...settings, contextWindow: 1_900, enabled: false })).toBe(false);
  });

  it("cuts only before a user message, keeping at least the last exchange, never between call and result", () => {
    const messages = [
      user("one"),
      toolCall("c1"),
      toolResult("c1"),
      assistant("done"),
      user("two"),
      toolCall("c2"),
      toolResult("c2"),
      assistant("done again"),
    ];
    expect(chooseCut(messages, 10)).toBe(4);
    expect(chooseCut(messages, 100_000)).toBe(4);
    expect(chooseCut([user("only"), assistant("one exchange")], 10)).toBeUndefined();
    const many = [user("a"), assistant("b"), user("c"), assistant("d"), user("e"), assistant("f")];
    expect(chooseCut(many, 8)).toBe(4);
    expect(chooseCut(many, 30)).toBe(2);
  });
});

describe("runners/pi transcript", () => {
  const dirs: string[] = [];
  const dirFor = () => {
    dirs.push(tempDir("pi-transcript-"));
    return dirs.at(-1)!;
  };
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it("rebuilds the same context after a compaction in a fresh load, with the same conversation id", () => {
    const dir = dirFor();
    const log: string[] = [];
    const a = new Transcript(dir, (m) => log.push(m));
    expect(a.file()).toEqual([]);
    for (const m of [user("one"), assistant("1"), user("two"), assistant("2")]) a.appendMessage(m);
    a.appendCompaction({ summary: "they counted", first_kept: 2, tokens_before: 999, timestamp: 42 });
    a.appendMessage(user("three"));

    const b = new Transcript(dir, (m) => log.push(m));
    expect(b.id).toBe(a.id);
    expect(b.context()).toEqual(a.context());
    expect(b.context().ordinals).toEqual([undefined, 2, 3, 4]);
    expect(JSON.stringify(b.context().messages[0])).toContain("<summary>\\nthey counted\\n</summary>");
    expect(b.file()).toEqual([
      { path: TRANSCRIPT, size: statSync(join(dir, TRANSCRIPT)).size, append_only: true },
    ]);
    expect(log).toEqual([]);
  });

  it("skips a torn last line and starts the next entry on a line of its own", () => {
    const dir = dirFor();
    const a = new Transcript(dir, () => {});
    a.appendMessage(user("kept"));
    appendFileSync(join(dir, TRANSCRIPT), '{"type":"message","mess');
    const log: string[] = [];
    const b = new Transcript(dir, (m) => log.push(m));
    expect(b.context().messages).toHaveLength(1);
    b.appendMessage(user("after the crash"));
    const c = new Transcript(dir, () => {});
    expect(c.context().messages.map((m) => JSON.stringify(m.content))).toEqual([
      JSON.stringify([{ type: "text", text: "kept" }]),
      JSON.stringify([{ type: "text", text: "after the crash" }]),
    ]);
    expect(log.join()).toMatch(/line 3/);
    expect(readFileSync(join(dir, TRANSCRIPT), "utf8").endsWith("\n")).toBe(true);
  });
});
