// Provider failures as the turn reports them: what of a provider's error body reaches the log, and a provider
// that never stops.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { events, makeBrain, textOf } from "../../testing/brain.js";
import { MAX_ANSWER_BYTES } from "./answer-bytes.js";
import { messageInBody } from "./errors.js";
import { ApiHarnessFactory } from "./factory.js";
import { MAX_ANSWER_CHARS } from "./step.js";
import { apiTestBed } from "./testing/bed.js";
import { FAKE_KEY, PROVIDER_FORMATS } from "./testing/provider.js";
import { warningsOfRetried } from "./testing/streamed-retry.js";

const bed = apiTestBed();

describe("provider error bodies", () => {
  it("cuts a long page between words, so no start of a key it echoes reaches the log", async () => {
    const session = await bed.brain().brain.create({
      harness: "api",
      config: { model: "anthropic:fake-model", options: { retries: 0 } },
    });
    // The 300-character cut falls inside the key the page echoes.
    const page = `<html><body><pre>${"x".repeat(260)} x-api-key: ${FAKE_KEY}</pre></body></html>`;
    bed.fake.script([{ error: { status: 400, message: "", page } }]);
    const outcome = await (await session.prompt("x")).settled;
    expect(outcome.error?.message).toMatch(
      /^anthropic model "fake-model" answered HTTP 400: <html><body><pre>x+ x-api-key:…$/,
    );
    expect(JSON.stringify(await events(session))).not.toContain(FAKE_KEY.slice(0, 8));
  });

  it.each(Object.keys(PROVIDER_FORMATS))(
    "cuts %s's own message when it is long, as a gateway echoing a request",
    async (provider) => {
      const session = await bed.brain({ provider }).brain.create({
        harness: "api",
        config: { model: `${provider}:fake-model`, options: { retries: 0 } },
      });
      bed.fake.script([{ error: { status: 400, message: `invalid request: ${"word ".repeat(40_000)}` } }]);
      const outcome = await (await session.prompt("x")).settled;
      expect(outcome.error?.message).toBe(
        `${provider} model "fake-model" answered HTTP 400: invalid request: ${"word ".repeat(195)}word… (200017 characters)`,
      );
    },
  );

  it("cuts a long error streamed mid-answer the same way", async () => {
    const session = await bed.brain().brain.create({
      harness: "api",
      config: { model: "anthropic:fake-model", options: { retries: 0 } },
    });
    const streamError = { after: 1, message: "word ".repeat(40_000), type: "invalid_request_error" };
    bed.fake.script([{ text: "never shown", streamError }]);
    const outcome = await (await session.prompt("x")).settled;
    expect(outcome.error?.message).toBe(
      `anthropic model "fake-model" reported an error mid-stream: invalid_request_error: ${"word ".repeat(199)}word… (200000 characters)`,
    );
  });

  it("gives a short page whole, and a JSON body's own message", () => {
    expect(messageInBody("Bad gateway")).toBe("Bad gateway");
    expect(messageInBody('{"error":{"message":"overloaded"}}')).toBe("overloaded");
    const failed = {
      type: "response.failed",
      response: { error: { code: "server_error", message: "it broke" } },
    };
    expect(messageInBody(JSON.stringify(failed))).toBe("it broke");
    expect(messageInBody(`${"word ".repeat(100)}`)).toBe(`${"word ".repeat(59)}word…`);
  });
});

describe.each(Object.keys(PROVIDER_FORMATS))("%s refusing the key or not finding the model", (provider) => {
  it("fails the turn with the provider's word and what to check", async () => {
    const session = await bed.brain({ provider }).brain.create({
      harness: "api",
      config: { model: `${provider}:fake-model`, options: { retries: 0 } },
    });
    bed.fake.script([
      { error: { status: 401, message: "invalid x-api-key" } },
      { error: { status: 404, message: "model: fake-model" } },
    ]);
    const refused = await (await session.prompt("x")).settled;
    expect(refused.error?.message).toBe(
      `${provider} model "fake-model" answered HTTP 401: invalid x-api-key; it refused the API key: check the key the session's provider is given (the variable its api_key_env names)`,
    );
    const missing = await (await session.prompt("y")).settled;
    expect(missing.error?.message).toBe(
      `${provider} model "fake-model" answered HTTP 404: model: fake-model; check the model's name (config.model) and the provider's base_url`,
    );
  });
});

describe("a 404 whose words name no model", () => {
  it("names the model the session asked for, never the key, and says to check config.model", async () => {
    const session = await bed.brain().brain.create({
      harness: "api",
      config: { model: "anthropic:claude-sonnet-typo", options: { retries: 0 } },
    });
    bed.fake.script([{ error: { status: 404, message: "Not Found" } }]);
    const outcome = await (await session.prompt("x")).settled;
    expect(outcome.error?.message).toBe(
      `anthropic model "claude-sonnet-typo" answered HTTP 404: Not Found; check the model's name (config.model) and the provider's base_url`,
    );
    expect(JSON.stringify(await events(session))).not.toContain(FAKE_KEY.slice(0, 8));
  });
});

describe("a provider's masked echo of the key it refused", () => {
  it("is redacted from the turn's error and warnings as the credential proxy redacts it", async () => {
    const session = await bed.brain({ provider: "openai" }).brain.create({
      harness: "api",
      config: { model: "openai:fake-model", options: { retries: 1, retry_base_ms: 0 } },
    });
    // OpenAI's 401: the key's first 8 characters, a `*` for each hidden one, its last 4.
    const masked = `${FAKE_KEY.slice(0, 8)}${"*".repeat(FAKE_KEY.length - 12)}${FAKE_KEY.slice(-4)}`;
    const message = `Incorrect API key provided: ${masked}. You can find your API key at https://platform.openai.com.`;
    // A 409 first, retried with a warning, then the 401 that fails the turn.
    bed.fake.script([{ error: { status: 409, message } }, { error: { status: 401, message } }]);
    const outcome = await (await session.prompt("x")).settled;
    expect(outcome.error?.message).toBe(
      `openai model "fake-model" answered HTTP 401: Incorrect API key provided: [redacted:api_key]. You can find your API key at https://platform.openai.com.; it refused the API key: check the key the session's provider is given (the variable its api_key_env names) (after 2 attempts)`,
    );
    const all = await events(session);
    expect(all.filter((e) => e.type === "harness.warning").map((e) => e.data.message)).toContainEqual(
      expect.stringMatching(
        /^openai model "fake-model" answered HTTP 409: Incorrect API key provided: \[redacted:api_key\]\. /,
      ),
    );
    expect(JSON.stringify(all)).not.toContain(masked);
  });
});

describe("errors a provider streams", () => {
  it("retries one that came before any text when its type says it passes, saying which it was", async () => {
    // After message_start: the SDK hands the error on as Anthropic's body, {type, message}.
    const streamError = { after: 1, message: "Overloaded", type: "overloaded_error" };
    const warnings = await warningsOfRetried(bed, streamError);
    expect(warnings).toContainEqual(
      expect.stringMatching(
        /^anthropic model "fake-model" reported an error mid-stream: overloaded_error: Overloaded; retrying/,
      ),
    );
  });

  it("fails the turn on one that says nothing of passing, naming it", async () => {
    const session = await bed.brain().brain.create({
      harness: "api",
      config: { model: "anthropic:fake-model", options: { retries: 3, retry_base_ms: 0 } },
    });
    const streamError = {
      after: 1,
      message: "Output blocked by content filtering policy",
      type: "invalid_request_error",
    };
    bed.fake.script([{ text: "never shown", streamError }]);
    const outcome = await (await session.prompt("x")).settled;
    expect(outcome.error).toEqual({
      code: "provider_error",
      message:
        'anthropic model "fake-model" reported an error mid-stream: invalid_request_error: Output blocked by content filtering policy',
    });
    expect(bed.fake.requests).toHaveLength(1);
  });
});

describe("a provider streaming without end", () => {
  it("is stopped past what any model writes, keeping what it streamed up to the cap", async () => {
    const session = await bed.brain().brain.create({
      harness: "api",
      config: { model: "anthropic:fake-model", options: { retries: 3 } },
    });
    bed.fake.script([{ text: "x".repeat(MAX_ANSWER_CHARS + 2 ** 20), chunkSize: 2 ** 18 }]);
    const outcome = await (await session.prompt("x")).settled;
    const message = expect.stringMatching(
      /streamed over 16 Mi characters .* in this turn.*max_turn_chars.*stopped/,
    );
    expect(outcome).toMatchObject({ status: "failed", error: { code: "provider_error", message } });
    // Not retried: text was streamed.
    expect([textOf(await events(session)).length, bed.fake.requests.length]).toEqual([MAX_ANSWER_CHARS, 1]);
  });

  it("is stopped once the turn's answers together pass options.max_turn_chars, keeping what each streamed", async () => {
    const session = await bed.brain().brain.create({
      harness: "api",
      config: { model: "anthropic:fake-model", tools: ["echo"], options: { max_turn_chars: 1000 } },
    });
    // Each answer is within the bound; the turn's two together are not.
    bed.fake.script([
      { text: "a".repeat(600), toolCalls: [{ name: "echo", arguments: { value: "hi" } }] },
      { text: "b".repeat(600), chunkSize: 50 },
    ]);
    const outcome = await (await session.prompt("x")).settled;
    const message = expect.stringMatching(/streamed over 1000 characters .* in this turn.*raise it/);
    expect(outcome).toMatchObject({ status: "failed", error: { code: "provider_error", message } });
    const text = textOf(await events(session));
    expect(text.startsWith("a".repeat(600))).toBe(true);
    expect(text.length).toBeLessThanOrEqual(1000);
    expect(text.length).toBeGreaterThan(600);
  });

  it("is stopped past what any answer holds though it never ends a line, before the SDK buffers more", async () => {
    // One event line that never ends: the SDK holds it whole waiting for its newline, and parses no part to count.
    const piece = Buffer.alloc(2 ** 20, "a");
    const endless = createServer(async (req, res) => {
      req.resume();
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write('event: content_block_delta\ndata: {"type":"content_block_delta","delta":{"text":"');
      for (let sent = 0; sent <= MAX_ANSWER_BYTES + 2 ** 21 && !res.destroyed; sent += piece.length) {
        if (!res.write(piece))
          await new Promise((resolve) => res.once("drain", resolve).once("close", resolve));
      }
    });
    await new Promise<void>((resolve) => endless.listen(0, "127.0.0.1", resolve));
    try {
      const base_url = `http://127.0.0.1:${(endless.address() as AddressInfo).port}/v1`;
      const t = bed.use(
        makeBrain({ factories: [new ApiHarnessFactory()], provider: { api_key: FAKE_KEY, base_url } }),
      );
      const session = await t.brain.create({
        harness: "api",
        config: { model: "anthropic:fake-model", options: { retries: 0, idle_timeout_ms: 20_000 } },
      });
      const outcome = await (await session.prompt("x")).settled;
      expect(outcome.error).toEqual({
        code: "provider_error",
        message: `the stream of anthropic model "fake-model" broke off: sent over 128 MiB in one response, more than any model's answer; stopped (check the provider, or the proxy at its base URL)`,
      });
    } finally {
      endless.closeAllConnections();
      await new Promise((resolve) => endless.close(resolve));
    }
  });
});

describe.each(Object.keys(PROVIDER_FORMATS))("%s's connection dropped before any text", (provider) => {
  it("is retried, saying so, and the turn goes on", async () => {
    const session = await bed.brain({ provider }).brain.create({
      harness: "api",
      config: { model: `${provider}:fake-model`, options: { retries: 2, retry_base_ms: 0 } },
    });
    bed.fake.script([{ text: "never shown", chunkSize: 2, breakAfter: 1 }, { text: "ok" }]);
    const outcome = await (await session.prompt("x")).settled;
    expect(outcome).toMatchObject({ status: "completed" });
    const all = await events(session);
    expect(textOf(all)).toBe("ok");
    const warnings = all.filter((e) => e.type === "harness.warning").map((e) => e.data.message);
    expect(warnings).toContain(
      `the stream of ${provider} model "fake-model" broke off: other side closed; retrying in 0.0 s (retry 1 of 2)`,
    );
  });
});

describe.each(Object.keys(PROVIDER_FORMATS))("%s asking for a wait past Brain's longest", (provider) => {
  it("fails the turn at once, saying when to try again, instead of retrying early into the same refusal", async () => {
    const session = await bed.brain({ provider }).brain.create({
      harness: "api",
      config: { model: `${provider}:fake-model`, options: { retries: 3, retry_base_ms: 0 } },
    });
    bed.fake.script([{ error: { status: 429, message: "quota exhausted", retryAfter: 3600 } }]);
    const before = Date.now();
    const outcome = await (await session.prompt("x")).settled;
    expect(outcome).toMatchObject({ status: "failed", error: { code: "provider_error" } });
    const message = outcome.error?.message ?? "";
    expect(message).toMatch(
      new RegExp(
        `^${provider} model "fake-model" answered HTTP 429: quota exhausted; it asked for a wait of 3600 s, longer than the 60 s ` +
          "Brain waits between tries: prompt again after \\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ$",
      ),
    );
    const at = Date.parse(/after (\S+)$/.exec(message)?.[1] ?? "");
    expect(at).toBeGreaterThanOrEqual(before + 3_599_000);
    expect(bed.fake.requests).toHaveLength(1);
  });
});
