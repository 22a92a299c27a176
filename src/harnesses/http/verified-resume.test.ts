// Verified resume for the HTTP/SSE (and, through the same ResumeState, the extension) families: the agent holds
// the conversation and Brain keeps the id that finds it. After answered turns that file must be there: lost,
// the turn fails loudly instead of starting the agent afresh; `rebuild` then sends the history as a summary.
import { lstatSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { events, makeBrain, type TestBrain, tempDir, textOf } from "../../testing/brain.js";
import { type Served, startSeedHarness, startTsHttpAgent } from "../../testing/nui.js";
import { RESUME_FILE } from "../nui/resume-state.js";
import { RemoteFactory } from "./remote.js";

let t: TestBrain | undefined;
const agents: Served[] = [];
const dirs: string[] = [];
afterEach(async () => {
  await t?.cleanup();
  t = undefined;
  for (const agent of agents.splice(0)) await agent.stop();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function answered(start: () => Promise<Served>) {
  const agent = await start();
  agents.push(agent);
  t = makeBrain({ factories: [new RemoteFactory()] });
  const session = await t.brain.create({ harness: "remote", config: { options: { url: agent.url } } });
  expect((await (await session.prompt("remember PLUM")).settled).status).toBe("completed");
  return { id: session.id, native: t.store.paths(session.id).native };
}

async function reopened(id: string, text: string) {
  await t!.brain.close();
  t = makeBrain({ home: t!.home, factories: [new RemoteFactory()] });
  const session = await t.brain.session(id);
  const { turn, settled } = await session.prompt(text);
  return { session, turn, outcome: await settled };
}

describe("verified resume on an HTTP agent", () => {
  it("resumes with the saved session id after a restart", async () => {
    const { id } = await answered(startTsHttpAgent);
    const { session, turn, outcome } = await reopened(id, "again");
    expect(outcome.status).toBe("completed");
    expect(textOf(await events(session), turn)).toMatch(/session=ts-conv-1\)$/);
  });

  it("fails loudly when the session id is lost; a rebuild sends the history as a marked summary", async () => {
    const { id, native } = await answered(startTsHttpAgent);
    rmSync(join(native, RESUME_FILE));
    const { outcome } = await reopened(id, "what was it?");
    expect(outcome.status).toBe("failed");
    expect(outcome.error?.code).toBe("brain_error");
    expect(outcome.error?.message).toMatch(
      /^remote: the conversation id of remote agent at http:\S+ \(nui-session\.json\) is missing, but Brain's log has 1 answered turn it should hold \(last prompt "remember PLUM"\)\. .*brain sessions rebuild/,
    );
    expect((await t!.brain.rebuild(id)).seeded.how).toBe("summary");
    const session = await t!.brain.session(id);
    const next = await session.prompt("what was it?");
    expect((await next.settled).status).toBe("completed");
    const reply = textOf(await events(session), next.turn);
    expect(reply).toContain("User: remember PLUM");
    // The agent started a new conversation of its own: its id is saved, and a later restart resumes.
    const later = await reopened(id, "and now");
    expect(later.outcome.status).toBe("completed");
  });

  it("follows no link planted in the native dir: neither to write the id nor to read one back", async () => {
    // The docker harness mounts the native dir into the agent's container, which may plant links there.
    const outside = tempDir("brain-outside-");
    const victim = join(outside, "victim.json");
    writeFileSync(victim, "precious\n");
    dirs.push(outside);
    const agent = await startTsHttpAgent();
    agents.push(agent);
    t = makeBrain({ factories: [new RemoteFactory()] });
    const session = await t.brain.create({ harness: "remote", config: { options: { url: agent.url } } });
    const native = t.store.paths(session.id).native;
    symlinkSync(victim, join(native, `${RESUME_FILE}.tmp`));
    expect((await (await session.prompt("remember PLUM")).settled).status).toBe("completed");
    expect(readFileSync(victim, "utf8")).toBe("precious\n");
    expect(lstatSync(join(native, RESUME_FILE)).isFile()).toBe(true);

    // A link in the file's place, to a file that names a conversation: not read, so the id counts as lost.
    writeFileSync(victim, '{"sessionId":"ts-conv-1"}\n');
    rmSync(join(native, RESUME_FILE));
    symlinkSync(victim, join(native, RESUME_FILE));
    const { outcome } = await reopened(session.id, "again");
    expect(outcome.status).toBe("failed");
    expect(outcome.error?.message).toMatch(
      /the conversation id of remote agent .* \(nui-session\.json\) (is missing|does not hold)/,
    );
  });

  it("an agent that names no session keeps none: the file says so, and a restart resumes as before", async () => {
    const { id, native } = await answered(startSeedHarness);
    // And that the agent (a remote one, offering no checkpoint) keeps no state in the native dir.
    const saved = JSON.parse(readFileSync(join(native, RESUME_FILE), "utf8"));
    expect(saved).toEqual({ sessionId: null, stateInNativeDir: false });
    const { outcome } = await reopened(id, "again");
    expect(outcome.status).toBe("completed");
  });
});
