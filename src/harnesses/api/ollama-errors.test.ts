// Ollama's error line: kept from its SDK package on a body cut at any byte, and what the turn does with it.
import { describe, expect, it } from "vitest";
import { events, textOf } from "../../testing/brain.js";
import { StreamErrorLines } from "./ollama-errors.js";
import { apiTestBed } from "./testing/bed.js";

const body = [
  '{"model":"m","created_at":"t","message":{"role":"assistant","content":"héllo"},"done":false}',
  '{"error":"model runner has unexpectedly stopped"}',
  "",
].join("\n");

/** `body` as a response whose chunks are cut every `size` bytes. */
function cutEvery(size: number): typeof globalThis.fetch {
  const bytes = new TextEncoder().encode(body);
  return async () =>
    new Response(
      new ReadableStream({
        start(controller) {
          for (let at = 0; at < bytes.length; at += size) controller.enqueue(bytes.slice(at, at + size));
          controller.close();
        },
      }),
    );
}

describe("Ollama's error line", () => {
  it.each([1, 7, 64, body.length])(
    "is taken out of a body cut every %i bytes, every other line passed on whole",
    async (size) => {
      const lines = new StreamErrorLines();
      const response = await lines.wrap(cutEvery(size))("http://127.0.0.1/api/chat");
      expect(await response.text()).toBe(`${body.split("\n")[0]}\n`);
      expect(lines.last()).toBe("model runner has unexpectedly stopped");
    },
  );
});

describe("an error Ollama streams after its 200", () => {
  const bed = apiTestBed();
  const session = (retries: number) =>
    bed.brain({ provider: "ollama" }).brain.create({
      harness: "api",
      config: { model: "ollama:m", options: { retries, retry_base_ms: 0 } },
    });
  const streamError = { after: 0, message: "model runner has unexpectedly stopped" };

  it("is retried when it came before any text (the model runner failed, not the request), saying so", async () => {
    const s = await session(1);
    bed.fake.script([{ text: "never shown", streamError }, { text: "made it" }]);
    const outcome = await (await s.prompt("x")).settled;
    expect(outcome.status).toBe("completed");
    const all = await events(s);
    expect(textOf(all)).toBe("made it");
    const warnings = all.filter((e) => e.type === "harness.warning").map((e) => e.data.message);
    expect(warnings).toContainEqual(
      expect.stringMatching(
        /^ollama model "m" reported an error mid-stream: model runner has unexpectedly stopped; retrying/,
      ),
    );
  });

  it("fails the turn, naming Ollama and its cause, when text was already shown (a retry would show it twice)", async () => {
    const s = await session(3);
    bed.fake.script([{ text: "abcdef", chunkSize: 2, streamError: { ...streamError, after: 2 } }]);
    const outcome = await (await s.prompt("x")).settled;
    expect(outcome.error).toEqual({
      code: "provider_error",
      message: 'ollama model "m" reported an error mid-stream: model runner has unexpectedly stopped',
    });
    expect([textOf(await events(s)), bed.fake.requests.length]).toEqual(["abcd", 1]);
  });
});
