// What a provider streams that is not what its API promised (an event that is not JSON, an error as its stream's
// first event), as the turn tells it: the provider's own word, bounded, and judged as the error it is.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeBrain } from "../../testing/brain.js";
import { ApiHarnessFactory } from "./factory.js";
import { apiTestBed } from "./testing/bed.js";
import { baseUrlFor } from "./testing/provider.js";
import { warningsOfRetried } from "./testing/streamed-retry.js";

const bed = apiTestBed();

// A 200 whose one event is not JSON: an unterminated string of 200,000 characters.
const garbled = `{"type": "garbled ${"x".repeat(200_000)}`;
const garbling = createServer((req, res) => {
  req.resume();
  res.writeHead(200, { "content-type": "text/event-stream" });
  res.end(`data: ${garbled}\n\n`);
});
beforeAll(() => new Promise<void>((resolve) => garbling.listen(0, "127.0.0.1", resolve)));
afterAll(() => new Promise<void>((resolve) => garbling.close(() => resolve())));

describe.each(["anthropic", "openai", "openai-chat", "gemini", "openrouter"])(
  "%s streaming an event that is not JSON",
  (provider) => {
    it("fails the turn saying what the provider sent, a bounded head of it, and where to look", async () => {
      const url = `http://127.0.0.1:${(garbling.address() as AddressInfo).port}`;
      const session = await bed.sessionAt(provider, url);
      const outcome = await (await session.prompt("x")).settled;
      expect(outcome).toMatchObject({ status: "failed", error: { code: "provider_error" } });
      expect(outcome.error?.message).toMatch(
        new RegExp(
          `^${provider} model "fake-model" sent a stream event that is not JSON: \\{"type": "garbled… \\(200018 characters\\); ` +
            "check the provider, or the proxy at its base URL$",
        ),
      );
    });
  },
);

describe("Anthropic's error as its stream's first event", () => {
  it("is the error it streamed, retried as the same error later in the stream is", async () => {
    const streamError = { after: 0, message: "Internal server error", type: "api_error" };
    const warnings = await warningsOfRetried(bed, streamError);
    expect(warnings).toContain(
      'anthropic model "fake-model" reported an error mid-stream: api_error: Internal server error; retrying in 0.0 s (retry 1 of 1)',
    );
  });
});

describe("ollama streaming a line that is not JSON", () => {
  it("fails the turn as the other providers do, instead of dropping the line and passing the answer for whole", async () => {
    const at = "2026-01-01T00:00:00Z";
    const piece = (content: string, done: boolean) =>
      JSON.stringify({ model: "m", created_at: at, message: { role: "assistant", content }, done });
    const ollama = createServer((req, res) => {
      req.resume();
      res.writeHead(200, { "content-type": "application/x-ndjson" });
      const closing = {
        ...JSON.parse(piece("", true)),
        done_reason: "stop",
        prompt_eval_count: 1,
        eval_count: 1,
      };
      res.end(
        `${piece("The answer ", false)}\n{"message": {"content": "is 4${"2".repeat(300)}\n${JSON.stringify(closing)}\n`,
      );
    });
    await new Promise<void>((resolve) => ollama.listen(0, "127.0.0.1", resolve));
    try {
      const url = `http://127.0.0.1:${(ollama.address() as AddressInfo).port}`;
      const t = bed.use(
        makeBrain({
          factories: [new ApiHarnessFactory()],
          provider: { base_url: baseUrlFor("ollama", { url }) },
        }),
      );
      const session = await t.brain.create({
        harness: "api",
        config: { model: "ollama:fake-model", options: { retries: 0 } },
      });
      const outcome = await (await session.prompt("x")).settled;
      expect(outcome).toMatchObject({ status: "failed", error: { code: "provider_error" } });
      expect(outcome.error?.message).toBe(
        `ollama model "fake-model" sent a stream event that is not JSON: {"message": {"content": "is… (329 characters); check the provider, or the proxy at its base URL`,
      );
    } finally {
      await new Promise((resolve) => ollama.close(resolve));
    }
  });
});
