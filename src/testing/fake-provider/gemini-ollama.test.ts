// The Gemini and Ollama wire formats, decoded by hand (not by the provider packages: those are exercised end to
// end by the api harness tests), so these tests check the bytes on the wire.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type FakeProvider, lastUserText, startFakeProvider } from "./index.js";

// biome-ignore lint/suspicious/noExplicitAny: decoded wire JSON
type Json = any;

interface Decoded {
  text: string;
  toolCalls: { id?: string; name: string; args: unknown }[];
  done: string;
  usage: { input: number; output: number };
}

let provider: FakeProvider;
beforeAll(async () => {
  provider = await startFakeProvider();
});
afterEach(() => provider.reset());
afterAll(() => provider.close());

function post(path: string, body: object, headers: Record<string, string> = {}, signal?: AbortSignal) {
  return fetch(`${provider.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
    signal,
  });
}

const gemini = {
  stream: "/v1beta/models/gemini-test:streamGenerateContent?alt=sse",
  once: "/v1beta/models/gemini-test:generateContent",
  body: (prompt: string) => ({
    systemInstruction: { parts: [{ text: "be brief" }] },
    contents: [{ role: "user", parts: [{ text: prompt }] }],
  }),
  decode(chunks: Json[]): Decoded {
    const out: Decoded = { text: "", toolCalls: [], done: "", usage: { input: 0, output: 0 } };
    for (const chunk of chunks) {
      const candidate = chunk.candidates[0];
      expect(candidate.content.role).toBe("model");
      for (const part of candidate.content.parts) {
        if (typeof part.text === "string") out.text += part.text;
        if (part.functionCall) {
          const { id, name, args } = part.functionCall;
          out.toolCalls.push({ ...(id ? { id } : {}), name, args });
        }
      }
      if (candidate.finishReason) out.done = candidate.finishReason;
      out.usage = {
        input: chunk.usageMetadata.promptTokenCount,
        output: chunk.usageMetadata.candidatesTokenCount ?? 0,
      };
    }
    return out;
  },
};

/** Data-only SSE, split by hand on blank lines. */
function sseData(text: string): Json[] {
  return text
    .split(/\r?\n\r?\n/)
    .filter((block) => block.trim() !== "")
    .map((block) => {
      expect(block.startsWith("data: ")).toBe(true);
      return JSON.parse(block.slice(6));
    });
}

const ollama = {
  path: "/api/chat",
  body: (prompt: string, stream?: boolean) => ({
    model: "llama-test",
    messages: [
      { role: "system", content: "be brief" },
      { role: "user", content: prompt },
    ],
    ...(stream === undefined ? {} : { stream }),
  }),
  decode(lines: Json[]): Decoded {
    const out: Decoded = { text: "", toolCalls: [], done: "", usage: { input: 0, output: 0 } };
    for (const [i, line] of lines.entries()) {
      expect(line.model).toBe("llama-test");
      expect(Number.isNaN(Date.parse(line.created_at))).toBe(false);
      expect(line.done).toBe(i === lines.length - 1);
      out.text += line.message.content;
      for (const call of line.message.tool_calls ?? []) {
        const { name, arguments: args } = call.function;
        out.toolCalls.push({ ...(call.id ? { id: call.id } : {}), name, args });
      }
      if (line.done) {
        out.done = line.done_reason;
        out.usage = { input: line.prompt_eval_count, output: line.eval_count };
      }
    }
    return out;
  },
};

function ndjson(text: string): Json[] {
  expect(text.endsWith("\n")).toBe(true);
  return text
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l));
}

describe("gemini", () => {
  it("streams text as data-only SSE chunks, the last with the finish reason and usage", async () => {
    provider.script([
      { text: "Hello there, streaming world!", chunkSize: 5, usage: { input: 11, output: 7 } },
    ]);
    const res = await post(gemini.stream, gemini.body("hi"), { "x-goog-api-key": "k" });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const chunks = sseData(await res.text());
    expect(chunks.length).toBe(6);
    expect(chunks.slice(0, -1).every((c) => c.candidates[0].finishReason === undefined)).toBe(true);
    expect(gemini.decode(chunks)).toEqual({
      text: "Hello there, streaming world!",
      toolCalls: [],
      done: "STOP",
      usage: { input: 11, output: 7 },
    });
    expect(chunks[0].modelVersion).toBe("gemini-test");
    expect(provider.requests[0]).toMatchObject({ format: "gemini" });
  });

  it("echoes the last user text, passing over function responses", async () => {
    const body = {
      contents: [
        { role: "user", parts: [{ text: "first" }] },
        { role: "model", parts: [{ functionCall: { name: "t", args: {} } }] },
        { role: "user", parts: [{ functionResponse: { name: "t", response: { ok: true } } }] },
      ],
    };
    const out = gemini.decode(sseData(await (await post(gemini.stream, body)).text()));
    expect(out.text).toBe("echo: first");
    expect(lastUserText(provider.requests[0]!)).toBe("first");
  });

  it("sends function calls whole, after the text, with STOP", async () => {
    const args = { path: "notes/a b.txt", nested: { ok: true, note: "ünïcode" } };
    provider.script([
      {
        text: "Let me look.",
        toolCalls: [
          { id: "call_given", name: "read_file", arguments: args },
          { name: "list", arguments: {} },
        ],
      },
    ]);
    const out = gemini.decode(sseData(await (await post(gemini.stream, gemini.body("x"))).text()));
    expect(out.text).toBe("Let me look.");
    expect(out.done).toBe("STOP");
    expect(out.toolCalls).toEqual([
      { id: "call_given", name: "read_file", args },
      { name: "list", args: {} },
    ]);
  });

  it("answers :generateContent with one response", async () => {
    provider.script([{ toolCalls: [{ name: "t", arguments: { x: 1 } }], usage: { input: 3, output: 4 } }]);
    const res = await post(gemini.once, gemini.body("a"));
    expect(res.headers.get("content-type")).toBe("application/json");
    expect(gemini.decode([await res.json()])).toEqual({
      text: "",
      toolCalls: [{ name: "t", args: { x: 1 } }],
      done: "STOP",
      usage: { input: 3, output: 4 },
    });
  });

  it("answers an error step with google.rpc status JSON", async () => {
    provider.script([{ error: { status: 429, message: "quota" } }]);
    const res = await post(gemini.stream, gemini.body("a"));
    expect(res.status).toBe(429);
    expect(await res.json()).toEqual({
      error: { code: 429, message: "quota", status: "RESOURCE_EXHAUSTED" },
    });
  });
});

describe("ollama", () => {
  it("streams NDJSON unless told not to, closing with counts", async () => {
    provider.script([
      { text: "Hello there, streaming world!", chunkSize: 5, usage: { input: 11, output: 7 } },
    ]);
    const res = await post(ollama.path, ollama.body("hi"));
    expect(res.headers.get("content-type")).toBe("application/x-ndjson");
    const lines = ndjson(await res.text());
    expect(lines).toHaveLength(7);
    expect(ollama.decode(lines)).toEqual({
      text: "Hello there, streaming world!",
      toolCalls: [],
      done: "stop",
      usage: { input: 11, output: 7 },
    });
  });

  it("sends tool calls whole, with object arguments", async () => {
    provider.script([
      {
        toolCalls: [
          { name: "read_file", arguments: { path: "a" } },
          { name: "list", arguments: {} },
        ],
      },
    ]);
    const out = ollama.decode(ndjson(await (await post(ollama.path, ollama.body("x", true))).text()));
    expect(out.toolCalls).toEqual([
      { name: "read_file", args: { path: "a" } },
      { name: "list", args: {} },
    ]);
  });

  it("answers one object with stream false, echoing by default", async () => {
    const res = await post(ollama.path, ollama.body("ping", false));
    expect(res.headers.get("content-type")).toBe("application/json");
    const body = await res.json();
    expect(body).toMatchObject({ done: true, done_reason: "stop", message: { content: "echo: ping" } });
  });

  it("answers errors as {error: text}", async () => {
    provider.script([{ error: { status: 404, message: 'model "x" not found, try pulling it first' } }]);
    const res = await post(ollama.path, ollama.body("a"));
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: 'model "x" not found, try pulling it first' });
  });
});

describe("a broken stream", () => {
  it.each([
    ["gemini", () => post(gemini.stream, gemini.body("x"))],
    ["ollama", () => post(ollama.path, ollama.body("x"))],
    ["anthropic", () => post("/v1/messages", { messages: [{ role: "user", content: "x" }], stream: true })],
  ])("%s: drops the connection after `breakAfter` frames", async (_name, send) => {
    provider.script([{ text: "a".repeat(50), chunkSize: 5, breakAfter: 2 }]);
    const res = await send();
    expect(res.status).toBe(200);
    await expect(res.text()).rejects.toThrow();
    expect((await (await send()).text()).length).toBeGreaterThan(0);
  });
});

describe("API key", () => {
  let secured: FakeProvider;
  beforeAll(async () => {
    secured = await startFakeProvider({ apiKey: "sk-test" });
  });
  afterAll(() => secured.close());

  it("gemini takes the key as x-goog-api-key or ?key=", async () => {
    const send = (path: string, headers: Record<string, string> = {}) =>
      fetch(`${secured.url}${path}`, { method: "POST", headers, body: JSON.stringify(gemini.body("hi")) });
    const missing = await send(gemini.once);
    expect(missing.status).toBe(400);
    expect(((await missing.json()) as Json).error.status).toBe("INVALID_ARGUMENT");
    expect((await send(gemini.once, { "x-goog-api-key": "sk-test" })).status).toBe(200);
    expect((await send(`${gemini.stream}&key=sk-test`)).status).toBe(200);
    expect((await send(gemini.once, { authorization: "Bearer sk-test" })).status).toBe(400);
  });

  it("ollama takes a Bearer token", async () => {
    const send = (headers: Record<string, string>) =>
      fetch(`${secured.url}/api/chat`, {
        method: "POST",
        headers,
        body: JSON.stringify(ollama.body("hi", false)),
      });
    const missing = await send({});
    expect(missing.status).toBe(401);
    expect(await missing.json()).toEqual({ error: "unauthorized" });
    expect((await send({ authorization: "Bearer sk-test" })).status).toBe(200);
  });
});

describe("gemini thought signatures", () => {
  const call = (signature?: string) => ({
    role: "model",
    parts: [
      { functionCall: { name: "echo", args: {} }, ...(signature ? { thoughtSignature: signature } : {}) },
    ],
  });
  const answer = { role: "user", parts: [{ functionResponse: { name: "echo", response: {} } }] };
  const path = "/v1beta/models/fake-thinking-model:generateContent";
  const ask = (model: object) => post(path, { contents: [gemini.body("x").contents[0], model, answer] });

  it("a thinking model refuses a function call sent back without its signature, as Gemini 3 does", async () => {
    const res = await ask(call());
    expect(res.status).toBe(400);
    const { error } = (await res.json()) as Json;
    expect(error.status).toBe("INVALID_ARGUMENT");
    expect(error.message).toContain("missing a thought_signature");
    expect((await ask(call("skip_thought_signature_validator"))).status).toBe(400);
    expect((await ask(call("sig"))).status).toBe(200);
  });

  it("streams the thought apart from the text, and signs the first function call", async () => {
    provider.script([
      {
        reasoning: { text: "hmm", signature: "sig-1" },
        toolCalls: [
          { name: "a", arguments: {} },
          { name: "b", arguments: {} },
        ],
      },
    ]);
    const res = await post(gemini.once, gemini.body("x"));
    const parts = ((await res.json()) as Json).candidates[0].content.parts;
    expect(parts[0]).toEqual({ text: "hmm", thought: true });
    expect(parts.map((p: Json) => p.thoughtSignature)).toEqual([undefined, "sig-1", undefined]);
  });
});
