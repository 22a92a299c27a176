// Verified resume on the api harness (in process, fast): a reopened harness whose native state lost the
// conversation fails the turn loudly, naming the file, and never sends the model a request without its history.
// The same check on each real CLI is in src/testing/cli-lost-history.ts.
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { CONVERSATION_FILE } from "../harnesses/api/conversation.js";
import { ApiHarnessFactory } from "../harnesses/api/factory.js";
import { credentialsFor, startKeyedProvider } from "../harnesses/api/testing/provider.js";
import { makeBrain, type TestBrain } from "../testing/brain.js";
import type { FakeProvider } from "../testing/fake-provider/index.js";

let fake: FakeProvider;
let t: TestBrain | undefined;
beforeAll(async () => {
  fake = await startKeyedProvider();
});
afterEach(async () => {
  await t?.cleanup();
  t = undefined;
  fake.reset();
});
afterAll(() => fake.close());

function brain(home?: string): TestBrain {
  t = makeBrain({
    factories: [new ApiHarnessFactory({ env: {} })],
    provider: credentialsFor("anthropic", fake),
    ...(home ? { home } : {}),
  });
  return t;
}

async function answeredSession() {
  const session = await brain().brain.create({ harness: "api", config: { model: "anthropic:fake-model" } });
  fake.script([{ text: "first answer" }]);
  expect((await (await session.prompt("remember the word tangerine")).settled).status).toBe("completed");
  return session;
}

async function reopenedTurn(id: string) {
  await t!.brain.close();
  const again = await brain(t!.home).brain.session(id);
  const before = fake.requests.length;
  const outcome = await (await again.prompt("what was the word?")).settled;
  return { outcome, requests: fake.requests.length - before };
}

describe("verified resume", () => {
  it("fails loudly, naming the file, when the conversation file is gone", async () => {
    const session = await answeredSession();
    rmSync(join(t!.store.paths(session.id).native, CONVERSATION_FILE));
    const { outcome, requests } = await reopenedTurn(session.id);
    expect(outcome.status).toBe("failed");
    expect(outcome.error?.code).toBe("brain_error");
    expect(outcome.error?.message).toMatch(
      /^api: the api harness's conversation file \(conversation\.jsonl\) is missing, but Brain's log has 1 answered turn it should hold \(last prompt "remember the word tangerine"\)\. .*brain sessions rebuild/,
    );
    expect(requests).toBe(0);
  });

  it("fails loudly when the file holds another conversation", async () => {
    const session = await answeredSession();
    const file = join(t!.store.paths(session.id).native, CONVERSATION_FILE);
    writeFileSync(
      file,
      `${JSON.stringify({ type: "message", message: { role: "user", content: "other" } })}\n`,
    );
    const { outcome, requests } = await reopenedTurn(session.id);
    expect(outcome.error?.message).toMatch(
      /does not hold the last prompt Brain's log says the model answered/,
    );
    expect(requests).toBe(0);
  });

  it("resumes as before when the history is there, and a new session has nothing to check", async () => {
    const session = await answeredSession();
    fake.script([{ text: "tangerine" }]);
    const { outcome, requests } = await reopenedTurn(session.id);
    expect(outcome.status).toBe("completed");
    expect(requests).toBe(1);
    expect(JSON.stringify(fake.requests.at(-1)!.body)).toContain("remember the word tangerine");
  });
});
