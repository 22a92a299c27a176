// A model may repeat the provider key (a tool printed it, a user pasted it): the api harness's conversation file
// is checkpointed, and a checkpoint scan that finds the key refuses every checkpoint (and so fork) of the session
// from then on. The file keeps the key out, as the session's log does.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { apiTestBed } from "./testing/bed.js";
import { FAKE_KEY } from "./testing/provider.js";

const bed = apiTestBed();

describe("api harness: the provider key in the conversation", () => {
  it("is not written to the conversation file, and the session still checkpoints", async () => {
    const t = bed.brain();
    const session = await t.brain.create({ harness: "api", config: { model: "openai-chat:fake-model" } });
    bed.fake.script([{ text: `Your key is ${FAKE_KEY}.` }]);
    expect((await (await session.prompt(`Remember my key ${FAKE_KEY}`)).settled).status).toBe("completed");
    const checkpoint = await session.checkpoint();
    expect(checkpoint.files).toHaveLength(1);
    const file = readFileSync(join(t.store.paths(session.id).native, "conversation.jsonl"), "utf8");
    expect(file).toContain("Your key is");
    expect(file).not.toContain(FAKE_KEY);
  });
});

describe("api harness: a host secret a tool's call and result carry", () => {
  it("is not written to the conversation file, and the session still checkpoints", async () => {
    // A secret-named variable of the host is one of every session's secrets (core/credentials.ts hostSecrets).
    const token = "tok-secrets-probe-0123456789";
    process.env.BRAIN_SECRETS_PROBE_TOKEN = token;
    try {
      const t = bed.brain();
      const session = await t.brain.create({
        harness: "api",
        config: { model: "openai-chat:fake-model", tools: ["echo"] },
      });
      bed.fake.script([{ toolCalls: [{ name: "echo", arguments: { value: token } }] }, { text: "Echoed." }]);
      expect((await (await session.prompt("Echo the token.")).settled).status).toBe("completed");
      expect((await session.checkpoint()).files).toHaveLength(1);
      const file = readFileSync(join(t.store.paths(session.id).native, "conversation.jsonl"), "utf8");
      expect(file).toContain("[redacted:BRAIN_SECRETS_PROBE_TOKEN]");
      expect(file).not.toContain(token);
    } finally {
      delete process.env.BRAIN_SECRETS_PROBE_TOKEN;
    }
  });
});
