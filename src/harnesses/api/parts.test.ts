// The api harness's small parts on their own: usage and cost, provider error words and retry timing, the
// conversation file's replay rules.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { APICallError, type LanguageModelUsage } from "ai";
import { describe, expect, it } from "vitest";
import { tempDir } from "../../testing/brain.js";
import { CONVERSATION_FILE, Conversation } from "./conversation.js";
import { backoffMs, describeProviderError, isRetryable, messageInBody } from "./errors.js";
import { parseSettings } from "./settings.js";
import { TurnUsage } from "./usage.js";

function usage(input: number, output: number, cacheRead = 0, cacheWrite = 0): LanguageModelUsage {
  return {
    inputTokens: input,
    outputTokens: output,
    totalTokens: input + output,
    inputTokenDetails: {
      noCacheTokens: input - cacheRead - cacheWrite,
      cacheReadTokens: cacheRead,
      cacheWriteTokens: cacheWrite,
    },
    outputTokenDetails: { textTokens: output, reasoningTokens: 0 },
  };
}

describe("usage", () => {
  it("sums requests and prices cache reads and writes at their own rates", () => {
    const turn = new TurnUsage({ input: 3, output: 15, cache_read: 0.3, cache_write: 3.75 });
    turn.add(usage(1000, 100, 800, 0));
    turn.add(usage(2000, 50, 0, 1000));
    // uncached 1200 × 3 + read 800 × 0.3 + written 1000 × 3.75 + output 150 × 15, per million
    expect(turn.take()).toEqual({
      input: 3000,
      output: 150,
      cache_read: 800,
      cache_write: 1000,
      cost: 0.00984,
    });
  });

  it("takes the cost OpenRouter reports when no price is configured", () => {
    const turn = new TurnUsage(undefined);
    turn.add(usage(10, 5), { openrouter: { usage: { cost: 0.0012 } } });
    turn.add(usage(10, 5), { openrouter: { usage: { cost: 0.0003 } } });
    expect(turn.take()).toEqual({ input: 20, output: 10, cost: 0.0015 });
    expect(new TurnUsage(undefined).take()).toBeUndefined();
  });

  it("gives what was spent since the last take, so messages' usage sums to the turn's", () => {
    const turn = new TurnUsage(undefined);
    turn.add(usage(10, 5));
    expect(turn.take()).toEqual({ input: 10, output: 5 });
    expect(turn.take()).toBeUndefined();
    turn.add(usage(7, 1));
    expect(turn.take()).toEqual({ input: 7, output: 1 });
  });
});

describe("provider errors", () => {
  const apiError = (statusCode: number | undefined, body?: string, headers?: Record<string, string>) =>
    new APICallError({
      message: "Bad Request",
      url: "http://h/v1/messages",
      requestBodyValues: {},
      ...(statusCode === undefined ? {} : { statusCode }),
      ...(body ? { responseBody: body } : {}),
      ...(headers ? { responseHeaders: headers } : {}),
    });

  it("reads the provider's own message from any of the error shapes", () => {
    expect(messageInBody('{"type":"error","error":{"type":"x","message":"anthropic says"}}')).toBe(
      "anthropic says",
    );
    expect(messageInBody('{"error":"model not found"}')).toBe("model not found");
    expect(messageInBody('{"message":"plain"}')).toBe("plain");
    expect(messageInBody("<html>bad gateway</html>")).toBe("<html>bad gateway</html>");
    expect(
      describeProviderError(
        { provider: "ollama", modelId: "x" },
        apiError(404, '{"error":"model x not found"}'),
      ),
    ).toBe(
      `ollama model "x" answered HTTP 404: model x not found; check the model's name (config.model) and the provider's base_url`,
    );
    expect(describeProviderError({ provider: "openai", modelId: "gpt-x" }, apiError(undefined))).toBe(
      'could not reach openai model "gpt-x" at http://h: Bad Request',
    );
  });

  it("names where a request went by its origin alone: a base URL's path, query and user info may hold a key", () => {
    const unreachable = new APICallError({
      message: "fetch failed",
      url: "https://user:pw-secret@gateway.example:8443/key-in-path/v1/chat/completions?key=q-secret",
      requestBodyValues: {},
    });
    const said = describeProviderError({ provider: "openai", modelId: "gpt-x" }, unreachable);
    expect(said).toBe('could not reach openai model "gpt-x" at https://gateway.example:8443: fetch failed');
    expect(said).not.toMatch(/secret|key-in-path/);
  });

  it("retries what the SDK calls retryable, waiting at least what the provider asked", () => {
    expect(isRetryable(apiError(429))).toBe(true);
    expect(isRetryable(apiError(400))).toBe(false);
    expect(backoffMs(0, 100, apiError(429, undefined, { "retry-after": "2" }))).toBe(2000);
    expect(backoffMs(0, 100, apiError(429, undefined, { "retry-after-ms": "150" }))).toBeGreaterThanOrEqual(
      150,
    );
    const third = backoffMs(2, 100, apiError(500));
    expect(third).toBeGreaterThanOrEqual(320);
    expect(third).toBeLessThanOrEqual(480);
    expect(backoffMs(20, 1000, apiError(500))).toBe(60_000);
    // A date, as a gateway may send it: whole seconds, so up to one less than asked.
    const date = new Date(Date.now() + 30_000).toUTCString();
    const untilDate = backoffMs(0, 100, apiError(429, undefined, { "retry-after": date }));
    expect(untilDate).toBeGreaterThan(25_000);
    expect(untilDate).toBeLessThanOrEqual(30_000);
  });

  it("waits what Gemini's 429 body asks (RetryInfo), as it sends no retry-after header", () => {
    const body = JSON.stringify({
      error: {
        code: 429,
        message: "You exceeded your current quota",
        status: "RESOURCE_EXHAUSTED",
        details: [
          { "@type": "type.googleapis.com/google.rpc.QuotaFailure", violations: [] },
          { "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay: "37s" },
        ],
      },
    });
    expect(backoffMs(0, 1000, apiError(429, body))).toBe(37_000);
  });
});

describe("the conversation file", () => {
  it("replays the last summary and what follows it, and keeps every line", async () => {
    const dir = tempDir();
    const conversation = new Conversation(dir);
    await conversation.append(
      { type: "message", message: { role: "user", content: "a" } },
      { type: "message", message: { role: "assistant", content: "b" }, usage: { input: 500, output: 2 } },
    );
    expect(conversation.estimatedInputTokens()).toBe(500);
    await conversation.append({ type: "compaction", summary: "a then b" });
    expect(conversation.estimatedInputTokens()).toBe(0);
    await conversation.append({ type: "message", message: { role: "user", content: "c" } });
    await conversation.close();

    const reopened = new Conversation(dir);
    expect(reopened.messages()).toEqual([
      { role: "user", content: expect.stringContaining("a then b") },
      { role: "user", content: "c" },
    ]);
    expect(readFileSync(join(dir, CONVERSATION_FILE), "utf8").split("\n").filter(Boolean)).toHaveLength(4);
    expect(await reopened.checkpoint()).toEqual([
      { path: CONVERSATION_FILE, size: expect.any(Number), append_only: true },
    ]);
    expect(await new Conversation(tempDir()).checkpoint()).toEqual([]);
  });
});

describe("the size of what the next request carries", () => {
  it("counts an image at about what it costs, and a huge tool result as the model is sent it", async () => {
    const conversation = new Conversation(tempDir());
    await conversation.append(
      { type: "message", message: { role: "user", content: "a" } },
      { type: "message", message: { role: "assistant", content: "b" }, usage: { input: 500, output: 2 } },
      {
        type: "message",
        message: {
          role: "user",
          content: [
            { type: "text", text: "what is in it?" },
            { type: "image", image: "A".repeat(4_000_000), mediaType: "image/png" },
          ],
        },
      },
      {
        type: "message",
        message: {
          role: "tool",
          content: [
            {
              type: "tool-result",
              toolCallId: "call_1",
              toolName: "read",
              output: { type: "text", value: "x".repeat(4_000_000) },
            },
          ],
        },
      },
    );
    const estimate = conversation.estimatedInputTokens();
    // 500 measured, an image's 1,600 and a result of 100,000 characters at 4 a token, and the JSON around them.
    expect(estimate).toBeGreaterThan(500 + 1_600 + 25_000);
    expect(estimate).toBeLessThan(500 + 1_600 + 25_000 + 500);
    await conversation.close();
  });
});

describe("settings", () => {
  it("has defaults, and names the field of a bad value", () => {
    expect(parseSettings(undefined)).toMatchObject({ maxSteps: 50, retries: 2, compactAtTokens: 100_000 });
    expect(() => parseSettings({ price: { input: 1 } })).toThrow(/price.output/);
    expect(() => parseSettings({ retries: -1 })).toThrow(/retries/);
  });

  it("refuses headers HTTP cannot carry or the client sets itself (a content-length stalled the request)", () => {
    expect(parseSettings({ headers: { "x-route": "eu" } }).headers).toEqual({ "x-route": "eu" });
    expect(() => parseSettings({ headers: { "Content-Length": "1" } })).toThrow(
      "headers.Content-Length: is set by the HTTP client itself; leave it out",
    );
    expect(() => parseSettings({ headers: { host: "other.example" } })).toThrow("headers.host: is set by");
    expect(() => parseSettings({ headers: { "bad name": "x" } })).toThrow(
      "headers.bad name: is not an HTTP header name",
    );
    expect(() => parseSettings({ headers: { "x-a": "one\r\nx-b: two" } })).toThrow(
      "headers.x-a: must not hold a line break or NUL",
    );
  });

  it("refuses an idle_timeout_ms longer than a timer can wait (it would fire at once, failing every request)", () => {
    expect(parseSettings({ idle_timeout_ms: 2_147_483_647 }).idleTimeoutMs).toBe(2_147_483_647);
    expect(() => parseSettings({ idle_timeout_ms: 3_000_000_000 })).toThrow(
      "bad config.options for the api harness: idle_timeout_ms: at most 2147483647 ms (about 24.8 days, the longest a timer can wait); leave it out for the default of 300000",
    );
  });
});
