// The pi-cli harness on the real pi CLI (node_modules/.bin/pi --mode rpc), run in a loopback-only network
// namespace against the fake provider (Chat Completions; the other two APIs pi speaks in the last test). The
// checks every CLI family shares are in src/testing/cli-family.ts; here is what is pi's own: its tools gated up
// front, its system prompt passed as text, a live steer, and the three wires.
import { appendFileSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { events, tempDir, textOf, waitForEvent } from "../../testing/brain.js";
import { agentRequests, checkTornLineResume, FAKE_KEY, historyOf } from "../../testing/cli.js";
import { checkKeyNotInAgent } from "../../testing/cli-credentials.js";
import { describeCliFamily } from "../../testing/cli-family.js";
import { describeLostHistory } from "../../testing/cli-lost-history.js";
import { checkpointsAfterHomeMoved } from "../../testing/cli-moved.js";
import { offeredTools } from "../../testing/fake-provider/shell-agent.js";
import { piCliCase } from "./testing/case.js";

// Real CLIs start slowly on a loaded machine.
vi.setConfig({ testTimeout: 180_000, hookTimeout: 60_000 });

const { found, start } = describeCliFamily({
  ...piCliCase,
  // pi never asks before a tool: its own test below gates the tools instead.
  skip: ["approvals"],
  refusals: [
    {
      name: "an endpoint without a model",
      provider: { base_url: "http://127.0.0.1:9/v1" },
      message: /pi needs the model's id at that endpoint: set the session's model/,
    },
    {
      name: "an api pi cannot speak",
      provider: { base_url: "http://127.0.0.1:9", api: "gemini" },
      config: { model: "m" },
      message: /the provider's api "gemini" is not one pi speaks/,
    },
  ],
});
describeLostHistory({
  found,
  start,
  harness: "pi-cli",
  transcript: ["pi/sessions"],
  named: /the pi session file \(none in pi\/sessions\) is missing/,
});

describe.runIf(found)("pi-cli's own", () => {
  // Resumed under another directory, the harness rewrites the paths its session file names: a checkpoint built
  // on one taken before the move was refused ("bytes 0..N differ"), as the file is declared append-only.
  it("checkpoints after its home moved, building on the checkpoints from before, and restores them exactly", async () => {
    await checkpointsAfterHomeMoved(await start(), piCliCase);
  });

  it("never gives the agent the provider's key: its shell cannot print it, the provider gets it from Brain's proxy", async () => {
    await checkKeyNotInAgent(await start(), ["authorization", `Bearer ${FAKE_KEY}`], "/chat/completions");
  });

  it("gates pi's tools with the policy: denied and ask tools are not enabled, and an ask says why", async () => {
    const b = await start();
    const session = await b.create({ permissions: { tools: { bash: "deny", write: "ask" } } });
    const turn = await session.prompt("List the files here");
    expect((await turn.settled).status).toBe("completed");
    const tools = offeredTools(agentRequests(b.sandbox.provider.requests)[0]?.body).map((t) => t.name);
    expect(tools.sort()).toEqual(["edit", "read"]);
    expect(textOf(await events(session), turn.turn)).toBe("hello from fake");
    const warning = (await events(session)).find((e) => e.type === "harness.warning");
    expect(JSON.stringify(warning?.data)).toMatch(/disabled: write/);
  });

  it("sends a system prompt that names a host file as text, never the file's content", async () => {
    const b = await start();
    const dir = tempDir("brain-pi-prompt-");
    try {
      const file = join(dir, "host-secret.txt");
      writeFileSync(file, "HOST-ONLY-CONTENT\n", { mode: 0o600 });
      const session = await b.create({ config: { system_prompt: file } });
      const turn = await session.prompt("NOTOOL hi");
      expect((await turn.settled).status).toBe("completed");
      const sent = JSON.stringify(b.sandbox.provider.requests.map((r) => r.body));
      expect(sent).toContain(file);
      expect(sent).not.toContain("HOST-ONLY-CONTENT");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("resumes a session file that ends in a torn line (pi killed mid-write, a full disk) without losing history", async () => {
    const transcript = (native: string) => {
      const sessions = join(native, "pi/sessions");
      const [name] = readdirSync(sessions).filter((n) => n.endsWith(".jsonl"));
      return join(sessions, name!);
    };
    await checkTornLineResume(await start(), transcript, '{"type":"message","id":"torn","parentId":"');
  });

  // pi writes each message to its file after it says so on stdout, and finishes its turn when the host reading it
  // dies: the messages it wrote meanwhile reached pi's history but never Brain's log, and nothing said so.
  it("warns, naming how many, when pi's session file holds messages Brain never read (its host died mid-turn)", async () => {
    const b = await start();
    const session = await b.create();
    expect((await (await session.prompt("NOTOOL first")).settled).status).toBe("completed");
    const t = await b.restart();
    const again = await t.brain.session(session.id);
    expect((await (await again.prompt("NOTOOL second")).settled).status).toBe("completed");
    const unseen = (all: { type: string; data: unknown }[]) =>
      all.filter((e) => e.type === "harness.warning" && JSON.stringify(e.data).includes("Brain's log lacks"));
    expect(unseen(await events(again))).toEqual([]);
    const u = await b.restart();
    const sessions = join(u.store.paths(session.id).native, "pi/sessions");
    const [name] = readdirSync(sessions).filter((n) => n.endsWith(".jsonl"));
    // What pi appends after Brain stopped reading: the rest of the turn, chained as pi chains its entries.
    const file = join(sessions, name!);
    const lines = readFileSync(file, "utf8").trim().split("\n");
    const [user, answer] = lines.slice(-2).map((l) => JSON.parse(l) as { id: string; parentId: string });
    const late = [
      { ...user!, id: "late1", parentId: answer!.id },
      { ...answer!, id: "late2", parentId: "late1" },
    ];
    appendFileSync(file, late.map((e) => `${JSON.stringify(e)}\n`).join(""));
    const third = await u.brain.session(session.id);
    const turn = await third.prompt("NOTOOL third");
    expect((await turn.settled).status).toBe("completed");
    const warned = unseen(await events(third));
    expect(warned).toHaveLength(1);
    expect(JSON.stringify(warned[0]!.data)).toMatch(
      /holds 2 messages Brain's log lacks: pi wrote them after/,
    );
  });

  it("steers the running turn", async () => {
    const b = await start();
    const session = await b.create();
    const turn = await session.prompt("List the files here CMD[sleep 1; ls]");
    await waitForEvent(session, (e) => e.type === "tool.call");
    await session.steer("NOTOOL and also this");
    expect((await turn.settled).status).toBe("completed");
    const sent = agentRequests(b.sandbox.provider.requests);
    expect(sent.some((r) => historyOf(r).includes("NOTOOL and also this"))).toBe(true);
  });

  it("keeps a turn open while pi retries its failed model call: the retried answer is the turn's", async () => {
    const b = await start();
    const session = await b.create();
    b.sandbox.provider.script([{ error: { status: 503, message: "the fake is overloaded", retry: false } }]);
    const turn = await session.prompt("NOTOOL hi");
    expect((await turn.settled).status).toBe("completed");
    const all = await events(session);
    expect(textOf(all, turn.turn)).toBe("hello from fake");
    const warning = all.find((e) => e.type === "harness.warning" && e.turn === turn.turn);
    expect(JSON.stringify(warning?.data)).toMatch(/the fake is overloaded\); pi tries it again/);
  });

  it.each([
    ["openai-responses", "/v1", "/v1/responses"],
    ["anthropic", "", "/v1/messages"],
  ])("speaks %s to the endpoint when told", async (api, path, endpoint) => {
    const b = await start({ provider: { api, path, model: "fake-model" } });
    const session = await b.create();
    const turn = await session.prompt("List the files here");
    expect((await turn.settled).status).toBe("completed");
    expect(textOf(await events(session), turn.turn)).toBe("Let me look.done");
    expect(agentRequests(b.sandbox.provider.requests)[0]?.path).toBe(endpoint);
  });
});
