// Verified resume on the api harness (in process, fast): a reopened harness whose native state lost the
// conversation fails the turn loudly, naming the file, and never sends the model a request without its history.
// The same check on each real CLI is in src/testing/cli-lost-history.ts.
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CONVERSATION_FILE } from "../harnesses/api/conversation.js";
import { apiTestBed } from "../harnesses/api/testing/bed.js";

const bed = apiTestBed();
const brain = (home?: string) => bed.brain({ ...(home ? { home } : {}) });

async function answeredSession() {
  const session = await brain().brain.create({ harness: "api", config: { model: "anthropic:fake-model" } });
  bed.fake.script([{ text: "first answer" }]);
  expect((await (await session.prompt("remember the word tangerine")).settled).status).toBe("completed");
  return session;
}

async function reopenedTurn(id: string) {
  await bed.current.brain.close();
  const again = await brain(bed.current.home).brain.session(id);
  const before = bed.fake.requests.length;
  const outcome = await (await again.prompt("what was the word?")).settled;
  return { outcome, requests: bed.fake.requests.length - before };
}

describe("verified resume", () => {
  it("fails loudly, naming the file, when the conversation file is gone", async () => {
    const session = await answeredSession();
    rmSync(join(bed.current.store.paths(session.id).native, CONVERSATION_FILE));
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
    const file = join(bed.current.store.paths(session.id).native, CONVERSATION_FILE);
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
    bed.fake.script([{ text: "tangerine" }]);
    const { outcome, requests } = await reopenedTurn(session.id);
    expect(outcome.status).toBe("completed");
    expect(requests).toBe(1);
    expect(JSON.stringify(bed.fake.requests.at(-1)!.body)).toContain("remember the word tangerine");
  });
});
