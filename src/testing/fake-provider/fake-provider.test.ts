import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { type FakeProvider, lastUserText, startFakeProvider } from "./index.js";
import {
  anthropic,
  type Client,
  type Decoded,
  type Json,
  openaiChat,
  openaiResponses,
  parseSse,
  STOP,
} from "./wire-clients.js";

let provider: FakeProvider;

beforeAll(async () => {
  provider = await startFakeProvider();
});
afterEach(() => provider.reset());
afterAll(() => provider.close());

function post(client: Client, body: object, headers: Record<string, string> = {}, signal?: AbortSignal) {
  return fetch(`${provider.url}${client.path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
    signal,
  });
}

async function streamed(client: Client, prompt: string): Promise<Decoded> {
  const res = await post(client, client.body(prompt, true));
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
  return client.decodeStream(parseSse(await res.text()));
}

describe.each([openaiChat, anthropic, openaiResponses])("$format", (client) => {
  it("streams text in chunks, with usage", async () => {
    provider.script([
      { text: "Hello there, streaming world!", chunkSize: 5, usage: { input: 11, output: 7 } },
    ]);
    const out = await streamed(client, "hi");
    expect(out).toEqual({
      text: "Hello there, streaming world!",
      toolCalls: [],
      stop: STOP[client.format].text,
      usage: { input: 11, output: 7 },
    });
  });

  it("echoes the last user message by default, with estimated usage", async () => {
    const out = await streamed(client, "ping 🏓 pong");
    expect(out.text).toBe("echo: ping 🏓 pong");
    expect(out.usage.input).toBeGreaterThan(0);
    expect(out.usage.output).toBe(Math.ceil("echo: ping 🏓 pong".length / 4));
  });

  it("streams tool calls as argument fragments that reassemble", async () => {
    const args = { path: "notes/a b.txt", lines: [1, 2, 3], nested: { ok: true, note: "ünïcode" } };
    provider.script([
      {
        text: "Let me look.",
        toolCalls: [
          { id: "call_given", name: "read_file", arguments: args },
          { name: "list", arguments: {} },
        ],
      },
    ]);
    const out = await streamed(client, "read it");
    expect(out.text).toBe("Let me look.");
    expect(out.stop).toBe(STOP[client.format].tools);
    expect(out.toolCalls).toHaveLength(2);
    expect(out.toolCalls[0]).toEqual({ id: "call_given", name: "read_file", args });
    expect(out.toolCalls[1]).toMatchObject({ name: "list", args: {} });
    expect(out.toolCalls[1]?.id).toMatch(/^[A-Za-z0-9_-]+$/);
  });

  it("answers without streaming when stream is false", async () => {
    provider.script([
      { text: "plain" },
      { toolCalls: [{ name: "t", arguments: { x: 1 } }], usage: { input: 3, output: 4 } },
    ]);
    const first = await post(client, client.body("a", false));
    expect(first.headers.get("content-type")).toBe("application/json");
    expect(client.decodeJson(await first.json())).toMatchObject({
      text: "plain",
      stop: STOP[client.format].text,
    });
    const second = client.decodeJson(await (await post(client, client.body("b", false))).json());
    expect(second.toolCalls).toMatchObject([{ name: "t", args: { x: 1 } }]);
    expect(second.stop).toBe(STOP[client.format].tools);
    expect(second.usage).toEqual({ input: 3, output: 4 });
  });

  it("answers an error step with the provider's error JSON", async () => {
    provider.script([
      { error: { status: 429, message: "slow down", retry: false } },
      { error: { status: 400, message: "bad thing", type: "custom_error" } },
    ]);
    const limited = await post(client, client.body("a", true));
    expect(limited.status).toBe(429);
    expect(limited.headers.get("x-should-retry")).toBe("false");
    const limitedError = client.errorOf(await limited.json());
    expect(limitedError.message).toBe("slow down");
    expect(limitedError.type).toBe(client.format === "anthropic" ? "rate_limit_error" : "requests");
    const bad = await post(client, client.body("b", false));
    expect(bad.status).toBe(400);
    expect(client.errorOf(await bad.json())).toMatchObject({ type: "custom_error", message: "bad thing" });
  });

  it("logs every request in order", async () => {
    await streamed(client, "one");
    await post(client, client.body("two", false), { "x-trace": "t2" }).then((r) => r.text());
    expect(provider.requests).toHaveLength(2);
    const [first, second] = provider.requests;
    expect(first).toMatchObject({ seq: 1, format: client.format, path: client.path, body: { stream: true } });
    expect(second).toMatchObject({ seq: 2, headers: { "x-trace": "t2" }, body: { stream: false } });
    expect(lastUserText(first!)).toBe("one");
    expect(second!.receivedAt).toBeGreaterThanOrEqual(first!.receivedAt);
  });

  it("also serves the path without /v1", async () => {
    const res = await fetch(`${provider.url}${client.path.replace("/v1", "")}`, {
      method: "POST",
      body: JSON.stringify(client.body("short", false)),
    });
    expect(client.decodeJson(await res.json()).text).toBe("echo: short");
  });

  it("survives a client abort during a slow stream and serves the next request", async () => {
    provider.script([{ text: "x".repeat(200), chunkSize: 1, delayMs: 20 }]);
    const controller = new AbortController();
    const res = await post(client, client.body("slow", true), {}, controller.signal);
    const reader = res.body!.getReader();
    const first = await reader.read();
    expect(first.done).toBe(false);
    controller.abort();
    await expect(reader.read()).rejects.toThrow();
    await vi.waitFor(() => expect(provider.requests[0]?.aborted).toBe(true));

    const out = await streamed(client, "after");
    expect(out.text).toBe("echo: after");
  });

  it("keeps a hang step open until the client aborts", async () => {
    provider.script([{ hang: true }]);
    const controller = new AbortController();
    const pending = post(client, client.body("wait", true), {}, controller.signal);
    await provider.waitForRequests(1);
    controller.abort();
    await expect(pending).rejects.toThrow();
    await vi.waitFor(() => expect(provider.requests[0]?.aborted).toBe(true));
    expect((await streamed(client, "next")).text).toBe("echo: next");
  });
});

describe("API key", () => {
  let secured: FakeProvider;
  beforeAll(async () => {
    secured = await startFakeProvider({ apiKey: "sk-test" });
  });
  afterAll(() => secured.close());

  it.each([openaiChat, anthropic, openaiResponses])(
    "$format checks the key where its clients send it",
    async (client) => {
      const url = `${secured.url}${client.path}`;
      const send = (headers: Record<string, string>) =>
        fetch(url, { method: "POST", headers, body: JSON.stringify(client.body("hi", false)) });

      const missing = await send({});
      expect(missing.status).toBe(401);
      const error = client.errorOf(await missing.json());
      expect(error.type).toBe(
        client.format === "anthropic" ? "authentication_error" : "invalid_request_error",
      );

      expect((await send(client.auth("sk-wrong"))).status).toBe(401);
      // OpenAI never reads x-api-key; Anthropic takes the key either way (its SDK sends a Bearer token).
      const bearer = await send({ authorization: "Bearer sk-test" });
      expect(bearer.status).toBe(200);
      await bearer.text();
      const viaApiKeyHeader = await send({ "x-api-key": "sk-test" });
      expect(viaApiKeyHeader.status).toBe(client.format === "anthropic" ? 200 : 401);
      await viaApiKeyHeader.text();

      const ok = await send(client.auth("sk-test"));
      expect(ok.status).toBe(200);
      expect(client.decodeJson(await ok.json()).text).toBe("echo: hi");
    },
  );

  it("does not spend a scripted step on a rejected request", async () => {
    secured.reset();
    secured.script([{ text: "scripted" }]);
    const rejected = await fetch(`${secured.url}/v1/chat/completions`, { method: "POST", body: "{}" });
    expect(rejected.status).toBe(401);
    const ok = await fetch(`${secured.url}/v1/chat/completions`, {
      method: "POST",
      headers: openaiChat.auth("sk-test"),
      body: JSON.stringify(openaiChat.body("x", false)),
    });
    expect(openaiChat.decodeJson(await ok.json()).text).toBe("scripted");
    expect(secured.requests.map((r) => r.seq)).toEqual([1, 2]);
  });

  it("guards the model list too", async () => {
    expect((await fetch(`${secured.url}/v1/models`)).status).toBe(401);
    const res = await fetch(`${secured.url}/v1/models`, { headers: { "x-api-key": "sk-test" } });
    expect(res.status).toBe(200);
  });
});

describe("server", () => {
  it("lists models in a shape both OpenAI and Anthropic clients read", async () => {
    const body: Json = await (await fetch(`${provider.url}/v1/models`)).json();
    expect(body.object).toBe("list");
    expect(body.data.length).toBeGreaterThan(0);
    expect(body.data[0]).toMatchObject({ object: "model", type: "model" });
  });

  it("answers unknown paths and bad JSON with errors, not crashes", async () => {
    expect((await fetch(`${provider.url}/v1/nope`)).status).toBe(404);
    const bad = await fetch(`${provider.url}/v1/messages`, { method: "POST", body: "{not json" });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as Json).type).toBe("error");
    expect(provider.requests[0]?.body).toBe("{not json");
  });

  it("uses a custom fallback once the queue is empty", async () => {
    provider.setFallback((req) => ({ text: `${req.format}#${req.seq}` }));
    provider.script([{ text: "queued" }]);
    const texts = [];
    for (let i = 0; i < 3; i++) texts.push((await streamed(anthropic, "x")).text);
    expect(texts).toEqual(["queued", "anthropic#2", "anthropic#3"]);
    provider.setFallback((req) => ({ text: `echo: ${lastUserText(req)}` }));
  });

  it("closes with streams and hung requests still open", async () => {
    const own = await startFakeProvider();
    own.script([{ hang: true }, { text: "y".repeat(100), chunkSize: 1, delayMs: 50 }]);
    const hung = fetch(`${own.url}/v1/responses`, { method: "POST", body: JSON.stringify({ input: "a" }) });
    await own.waitForRequests(1);
    const slow = await fetch(`${own.url}/v1/responses`, {
      method: "POST",
      body: JSON.stringify({ input: "b", stream: true }),
    });
    await own.close();
    await expect(hung).rejects.toThrow();
    await expect(slow.text()).rejects.toThrow();
  });
});

describe("lastUserText", () => {
  it("reads strings and content parts, skipping tool-result turns", () => {
    expect(lastUserText({ body: { input: "plain" } })).toBe("plain");
    expect(
      lastUserText({
        body: {
          messages: [
            { role: "user", content: [{ type: "text", text: "first" }, { type: "image" }] },
            { role: "assistant", content: [{ type: "tool_use", id: "t", name: "n", input: {} }] },
            { role: "user", content: [{ type: "tool_result", tool_use_id: "t", content: "r" }] },
          ],
        },
      }),
    ).toBe("first");
    expect(
      lastUserText({
        body: {
          input: [
            { role: "user", content: [{ type: "input_text", text: "q" }] },
            { type: "function_call_output", call_id: "c", output: "o" },
          ],
        },
      }),
    ).toBe("q");
    expect(lastUserText({ body: { messages: [{ role: "system", content: "s" }] } })).toBe("");
    expect(lastUserText({ body: null })).toBe("");
  });
});
