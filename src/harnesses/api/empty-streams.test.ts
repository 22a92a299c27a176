// A 200 whose stream ends before the model finished, with nothing of the answer in it (a proxy closing the stream
// cleanly, a server that sent only its headers): told in the same words on every provider, and tried again as a
// dropped stream is, since nothing was shown that a retry would show twice.
import { describe, expect, it } from "vitest";
import { events, textOf } from "../../testing/brain.js";
import { apiTestBed } from "./testing/bed.js";

const bed = apiTestBed();

const UNFINISHED = "the stream ended before the model finished (it sent no finish reason)";

async function session(provider: string, retries: number) {
  return bed.brain({ provider }).brain.create({
    harness: "api",
    config: { model: `${provider}:fake-model`, options: { retries, retry_base_ms: 1 } },
  });
}

describe.each(["anthropic", "openai", "openai-chat", "gemini", "openrouter", "ollama"])(
  "%s ending its stream before any of the answer",
  (provider) => {
    it("fails the turn saying the stream ended before the model finished", async () => {
      const s = await session(provider, 0);
      bed.fake.script([{ text: "never sent", endAfter: 0 }]);
      const outcome = await (await s.prompt("x")).settled;
      expect(outcome).toMatchObject({ status: "failed", error: { code: "provider_error" } });
      expect(outcome.error?.message).toBe(`${provider} model "fake-model": ${UNFINISHED}`);
    });

    it("is tried again, saying so, and the retry's answer is the turn's", async () => {
      const s = await session(provider, 1);
      bed.fake.script([{ text: "never sent", endAfter: 0 }, { text: "ok" }]);
      const outcome = await (await s.prompt("x")).settled;
      expect(outcome).toMatchObject({ status: "completed" });
      const all = await events(s);
      expect(textOf(all)).toBe("ok");
      const warnings = all
        .filter((e) => e.type === "harness.warning")
        .map((e) => (e.data as { message: string }).message);
      expect(warnings).toContainEqual(
        expect.stringMatching(
          new RegExp(`^${provider} model "fake-model": ${UNFINISHED.replace(/[()]/g, "\\$&")}; retrying in`),
        ),
      );
    });
  },
);
