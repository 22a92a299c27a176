import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { type FakeProvider, lastUserText, startFakeProvider } from "./index.js";

interface Decoded {
  text: string;
  toolCalls: { id: string; name: string; args: unknown }[];
  stop: string;
  usage: { input: number; output: number };
}

interface Frame {
  event?: string;
  data: string;
}

/** A deliberately independent SSE parser, so the tests check the bytes on the wire, not our own encoder. */
function parseSse(text: string): Frame[] {
  return text
    .split("\n\n")
    .filter((block) => block.trim() !== "")
    .map((block) => {
      const frame: Frame = { data: "" };
      for (const line of block.split("\n")) {
        if (line.startsWith("event: ")) frame.event = line.slice(7);
        if (line.startsWith("data: ")) frame.data += line.slice(6);
      }
      return frame;
    });
}

// biome-ignore lint/suspicious/noExplicitAny: decoded wire JSON
type Json = any;

/** How a client of each wire format builds a request and reassembles what comes back. */
interface Client {
  format: "openai-chat" | "anthropic" | "openai-responses";
  path: string;
  auth(key: string): Record<string, string>;
  body(prompt: string, stream: boolean): object;
  decodeStream(frames: Frame[]): Decoded;
  decodeJson(body: Json): Decoded;
  errorOf(body: Json): { type: string; message: string };
}

const openaiChat: Client = {
  format: "openai-chat",
  path: "/v1/chat/completions",
  auth: (key) => ({ authorization: `Bearer ${key}` }),
  body: (prompt, stream) => ({
    model: "gpt-test",
    messages: [
      { role: "system", content: "be brief" },
      { role: "user", content: prompt },
    ],
    stream,
    ...(stream ? { stream_options: { include_usage: true } } : {}),
  }),
  decodeStream(frames) {
    expect(frames.at(-1)?.data).toBe("[DONE]");
    const out: Decoded = { text: "", toolCalls: [], stop: "", usage: { input: 0, output: 0 } };
    const args: string[] = [];
    for (const frame of frames.slice(0, -1)) {
      const chunk = JSON.parse(frame.data);
      expect(chunk.object).toBe("chat.completion.chunk");
      if (chunk.usage)
        out.usage = { input: chunk.usage.prompt_tokens, output: chunk.usage.completion_tokens };
      const choice = chunk.choices[0];
      if (!choice) continue;
      if (choice.finish_reason) out.stop = choice.finish_reason;
      if (typeof choice.delta.content === "string") out.text += choice.delta.content;
      for (const call of choice.delta.tool_calls ?? []) {
        if (call.id) {
          expect(call.type).toBe("function");
          out.toolCalls[call.index] = { id: call.id, name: call.function.name, args: undefined };
          args[call.index] = "";
        }
        args[call.index] += call.function.arguments ?? "";
      }
    }
    for (const [i, call] of out.toolCalls.entries()) call.args = JSON.parse(args[i]!);
    return out;
  },
  decodeJson(body) {
    const choice = body.choices[0];
    return {
      text: choice.message.content ?? "",
      toolCalls: (choice.message.tool_calls ?? []).map((c: Json) => ({
        id: c.id,
        name: c.function.name,
        args: JSON.parse(c.function.arguments),
      })),
      stop: choice.finish_reason,
      usage: { input: body.usage.prompt_tokens, output: body.usage.completion_tokens },
    };
  },
  errorOf: (body) => body.error,
};

const anthropic: Client = {
  format: "anthropic",
  path: "/v1/messages",
  auth: (key) => ({ "x-api-key": key }),
  body: (prompt, stream) => ({
    model: "claude-test",
    max_tokens: 100,
    system: "be brief",
    messages: [{ role: "user", content: [{ type: "text", text: prompt }] }],
    stream,
  }),
  decodeStream(frames) {
    const out: Decoded = { text: "", toolCalls: [], stop: "", usage: { input: 0, output: 0 } };
    const blocks: Json[] = [];
    for (const frame of frames) {
      const event = JSON.parse(frame.data);
      expect(event.type).toBe(frame.event);
      if (event.type === "message_start") out.usage.input = event.message.usage.input_tokens;
      if (event.type === "content_block_start") blocks[event.index] = { ...event.content_block, json: "" };
      if (event.type === "content_block_delta") {
        const block = blocks[event.index];
        if (event.delta.type === "text_delta") out.text += event.delta.text;
        if (event.delta.type === "input_json_delta") block.json += event.delta.partial_json;
      }
      if (event.type === "message_delta") {
        out.stop = event.delta.stop_reason;
        out.usage.output = event.usage.output_tokens;
      }
    }
    expect(frames[0]?.event).toBe("message_start");
    expect(frames.at(-1)?.event).toBe("message_stop");
    for (const block of blocks.filter((b) => b.type === "tool_use")) {
      out.toolCalls.push({ id: block.id, name: block.name, args: JSON.parse(block.json) });
    }
    return out;
  },
  decodeJson(body) {
    return {
      text: body.content
        .filter((b: Json) => b.type === "text")
        .map((b: Json) => b.text)
        .join(""),
      toolCalls: body.content
        .filter((b: Json) => b.type === "tool_use")
        .map((b: Json) => ({ id: b.id, name: b.name, args: b.input })),
      stop: body.stop_reason,
      usage: { input: body.usage.input_tokens, output: body.usage.output_tokens },
    };
  },
  errorOf: (body) => {
    expect(body.type).toBe("error");
    return body.error;
  },
};

const openaiResponses: Client = {
  format: "openai-responses",
  path: "/v1/responses",
  auth: (key) => ({ authorization: `Bearer ${key}` }),
  body: (prompt, stream) => ({
    model: "gpt-test",
    instructions: "be brief",
    input: [{ role: "user", content: [{ type: "input_text", text: prompt }] }],
    stream,
  }),
  decodeStream(frames) {
    const out: Decoded = { text: "", toolCalls: [], stop: "", usage: { input: 0, output: 0 } };
    const args = new Map<string, string>();
    const events = frames.map((f) => JSON.parse(f.data));
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    for (const event of events) {
      if (event.type === "response.output_text.delta") out.text += event.delta;
      if (event.type === "response.function_call_arguments.delta") {
        args.set(event.item_id, (args.get(event.item_id) ?? "") + event.delta);
      }
      if (event.type === "response.output_item.done" && event.item.type === "function_call") {
        expect(args.get(event.item.id)).toBe(event.item.arguments);
        const argsText = args.get(event.item.id) ?? "";
        out.toolCalls.push({ id: event.item.call_id, name: event.item.name, args: JSON.parse(argsText) });
      }
      if (event.type === "response.completed") {
        out.stop = event.response.output.some((i: Json) => i.type === "function_call")
          ? "tool_calls"
          : "stop";
        out.usage = { input: event.response.usage.input_tokens, output: event.response.usage.output_tokens };
      }
    }
    expect(events[0]?.type).toBe("response.created");
    expect(events.at(-1)?.type).toBe("response.completed");
    return out;
  },
  decodeJson(body) {
    const out: Decoded = { text: "", toolCalls: [], stop: "stop", usage: { input: 0, output: 0 } };
    for (const item of body.output) {
      if (item.type === "message") out.text += item.content.map((c: Json) => c.text).join("");
      if (item.type === "function_call") {
        out.toolCalls.push({ id: item.call_id, name: item.name, args: JSON.parse(item.arguments) });
        out.stop = "tool_calls";
      }
    }
    out.usage = { input: body.usage.input_tokens, output: body.usage.output_tokens };
    return out;
  },
  errorOf: (body) => body.error,
};

const STOP = {
  "openai-chat": { text: "stop", tools: "tool_calls" },
  anthropic: { text: "end_turn", tools: "tool_use" },
  "openai-responses": { text: "stop", tools: "tool_calls" },
};

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
