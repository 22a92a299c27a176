// The opencode harness on the real opencode CLI (node_modules/.bin/opencode serve), run in a loopback-only
// network namespace against the fake provider (Chat Completions). The server it starts inside the namespace is
// published back to the host by the sandbox launcher. The checks every CLI family shares are in
// src/testing/cli-family.ts; opencode starts slowly, so several of them share one session here.
import { chmodSync, existsSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { events, tempDir, textOf, waitForEvent } from "../../testing/brain.js";
import { answerNextPermission, FAKE_KEY } from "../../testing/cli.js";
import { checkKeyNotInAgent } from "../../testing/cli-credentials.js";
import {
  deniesOne,
  describeCliFamily,
  interruptsMidStream,
  resumesAfterRestart,
  shellTurn,
} from "../../testing/cli-family.js";
import { describeLostHistory } from "../../testing/cli-lost-history.js";
import { opencodeCase } from "./testing/case.js";

// opencode's 185 MB binary can take tens of seconds to start on a loaded machine.
vi.setConfig({ testTimeout: 400_000, hookTimeout: 60_000 });

const family = opencodeCase;
const { found, start } = describeCliFamily(family);
describeLostHistory({
  found,
  start,
  harness: "opencode",
  transcript: ["opencode/data", "opencode-session.json"],
  named: /the opencode session ses_\w+ \(.*\) is missing/,
});

describe.runIf(found)("opencode's own", () => {
  it("runs a turn with a shell tool call and its result, then text; interrupts; resumes after a restart", async () => {
    const b = await start();
    const session = await b.create();
    await shellTurn(b, session, family);
    await interruptsMidStream(session);
    await resumesAfterRestart(b, session, family);
  });

  it("asks Brain's policy for approvals (one allowed, one denied) and queues a steer as a follow-up", async () => {
    const b = await start();
    const session = await b.create({ permissions: { tools: { bash: "ask" } } });
    const work = join(b.t.store.paths(session.id).native, "work");
    const allowed = await session.prompt("Create a file CMD[touch allowed.txt]");
    await waitForEvent(session, (e) => e.type === "permission.requested");
    await session.steer("NOTOOL and then this");
    expect(await answerNextPermission(session, "allow")).toBe("bash");
    expect((await allowed.settled).status).toBe("completed");
    expect(existsSync(join(work, "allowed.txt"))).toBe(true);
    const all = await events(session);
    expect(all.find((e) => e.type === "user.steer")?.data).toEqual({
      text: "NOTOOL and then this",
      queued: true,
    });
    expect(textOf(all, allowed.turn)).toBe("Let me look.donehello from fake");
    await deniesOne(session, work);
  });

  it("never gives the agent the provider's key: its shell cannot print it, the provider gets it from Brain's proxy", async () => {
    await checkKeyNotInAgent(await start(), ["authorization", `Bearer ${FAKE_KEY}`], "/chat/completions");
  });

  it("gives opencode a model naming {file:…} as text: the file is not read into its config", async () => {
    const b = await start();
    const dir = tempDir("brain-opencode-model-");
    try {
      const file = join(dir, "host-secret.txt");
      writeFileSync(file, "HOST-ONLY-CONTENT", { mode: 0o600 });
      const model = `{file:${file}}`;
      const session = await b.create({ config: { model } });
      const turn = await session.prompt("NOTOOL hi");
      expect((await turn.settled).status).toBe("completed");
      const requests = b.sandbox.provider.requests;
      expect(requests.map((r) => r.body?.model)).toContain(model);
      expect(JSON.stringify(requests.map((r) => r.body))).not.toContain("HOST-ONLY-CONTENT");
      expect(JSON.stringify(await events(session))).not.toContain("HOST-ONLY-CONTENT");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("puts opencode's questions to Brain's clients, its subagents' requests too, and dismisses a question at an interrupt", async () => {
    const b = await start();
    const session = await b.create({ permissions: { tools: { bash: "ask" } } });
    const work = join(b.t.store.paths(session.id).native, "work");
    const colour = {
      question: "Which colour?",
      header: "Colour",
      options: [
        { label: "red", description: "warm" },
        { label: "blue", description: "cool" },
      ],
    };
    const asked = await session.prompt(`CALL question ${JSON.stringify({ questions: [colour] })}`);
    const question = await waitForEvent(session, (e) => e.type === "question.requested");
    expect(question.data).toMatchObject({
      question: "Which colour?",
      header: "Colour",
      options: ["red", "blue"],
      option_descriptions: { red: "warm", blue: "cool" },
    });
    const id = (question.data as { id: string }).id;
    await session.answer({ type: "question.answered", data: { id, answer: "blue" } });
    expect((await asked.settled).status).toBe("completed");
    const result = (await events(session)).find((e) => e.type === "tool.result" && e.turn === asked.turn);
    expect(JSON.stringify(result?.data)).toContain('\\"Which colour?\\"=\\"blue\\"');

    // A subagent (opencode's `task` tool) runs in a session of its own; its bash asks Brain's policy all the same.
    const task = { description: "make a file", prompt: "CMD[touch sub.txt]", subagent_type: "general" };
    const delegated = await session.prompt(`CALL task ${JSON.stringify(task)}`);
    const permission = await waitForEvent(session, (e) => e.type === "permission.requested");
    expect(permission.data).toMatchObject({
      tool: "bash",
      reason: expect.stringMatching(/^a subagent asks/),
    });
    expect(await answerNextPermission(session, "allow")).toBe("bash");
    expect((await delegated.settled).status).toBe("completed");
    expect(existsSync(join(work, "sub.txt"))).toBe(true);

    const unanswered = await session.prompt(`CALL question ${JSON.stringify({ questions: [colour] })}`);
    await waitForEvent(session, (e) => e.type === "question.requested" && e.turn === unanswered.turn);
    await session.interrupt();
    expect((await unanswered.settled).status).toBe("interrupted");
    const after = await session.prompt("NOTOOL still there?");
    expect((await after.settled).status).toBe("completed");
  });

  it("a server that exits before it is healthy, then one that works", async () => {
    const dir = tempDir("brain-fake-opencode-");
    const script = join(dir, "opencode");
    writeFileSync(
      script,
      `#!/bin/sh
n=$(cat "${dir}/runs" 2>/dev/null || echo 0); echo $((n+1)) > "${dir}/runs"
if [ "$n" = 0 ]; then echo "fatal: gave up" >&2; exit 3; fi
exec "${found}" "$@"
`,
    );
    chmodSync(script, 0o755);
    const session = await (await start({ bin: script })).create();
    const failed = await (await session.prompt("NOTOOL one")).settled;
    expect(failed.error?.code).toBe("brain_error");
    expect(failed.error?.message).toMatch(
      /opencode: opencode exited with code 3; its stderr ended with: fatal: gave up/,
    );
    const fine = await session.prompt("NOTOOL two");
    expect((await fine.settled).status).toBe("completed");
    expect(textOf(await events(session), fine.turn)).toBe("hello from fake");
  });
});
