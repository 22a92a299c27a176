// The fetch that keeps Ollama's error line from its SDK package, on a body cut at any byte.
import { describe, expect, it } from "vitest";
import { StreamErrorLines } from "./ollama-errors.js";

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
