// A request waiting for a client when its runner dies: it ends with the turn, and says why (the runner's exit), not
// that a client interrupted it; whoever reads the log looks for the crash, and the answer it was waiting for is
// refused as it is no longer pending.
import { afterEach, describe, expect, it } from "vitest";
import { events, makeBrain, type TestBrain, textOf, waitForEvent } from "../../testing/brain.js";
import { inlineRunnerArgs } from "../../testing/inline-runner.js";
import { HitlDesk } from "../nui/hitl-desk.js";
import { ProcessFactory } from "./factory.js";

let t: TestBrain | undefined;
afterEach(async () => {
  await t?.cleanup();
  t = undefined;
});

/** Says its pid, then calls echo and waits for good: only a kill ends its turn. */
const callsAndWaits = inlineRunnerArgs(
  "",
  `
  if (!f.method) return;
  if (f.method !== "prompt") return reply(f.method === "checkpoint" ? [] : {});
  send({ attachment: f.attachment, turn: f.turn, event: "assistant.delta", data: { text: String(process.pid) } });
  send({ attachment: f.attachment, turn: f.turn, id: "c1", method: "tool.call", params: { id: "call-1", name: "echo", arguments: { value: "x" } } });`,
);

async function dyingSession() {
  const factory = new ProcessFactory({
    name: "dies",
    command: process.execPath,
    args: callsAndWaits,
    spares: 0,
    verifyHistory: false,
  });
  t = makeBrain({ factories: [factory] });
  const session = await t.brain.create({
    harness: "dies",
    config: { tools: ["echo"] },
    permissions: { tools: { echo: "ask" } },
  });
  const turn = await session.prompt("go");
  const asked = await waitForEvent(session, (e) => e.type === "permission.requested");
  return { session, turn, asked };
}

describe("requests pending when their runner dies", () => {
  it("a permission request is denied with the runner's exit as the reason, and takes no answer after", async () => {
    const { session, turn, asked } = await dyingSession();
    process.kill(Number(textOf(await events(session), turn.turn)), "SIGKILL");
    const settled = await turn.settled;
    expect(settled).toMatchObject({
      status: "failed",
      error: { message: expect.stringMatching(/killed by SIGKILL/) },
    });
    const all = await events(session);
    const resolved = all.filter((e) => e.type === "permission.resolved");
    expect(resolved.map((e) => e.data)).toEqual([
      {
        id: (asked.data as { id: string }).id,
        decision: "deny",
        reason: `the turn failed: ${settled.error?.message}`,
        unanswered: "cancelled",
      },
    ]);
    expect(all.find((e) => e.type === "tool.result")?.data).toMatchObject({
      content: [
        { text: `permission to run tool "echo" was denied: the turn failed: ${settled.error?.message}` },
      ],
    });
    await expect(session.reply((asked.data as { id: string }).id, { decision: "allow" })).rejects.toThrow(
      /no pending permission request/,
    );
  });

  it("nui HITL requests (an approval, a request of two questions) end cancelled, saying the runner died", async () => {
    const { session, turn } = await dyingSession();
    // As the daemon's HITL service asks: through the session's desk, for its running turn.
    const hitl = new HitlDesk("s", session.desk.forHarness(), () => {
      const at = session.askingTurn!;
      return { runId: at.id, turn: at.id, signal: at.signal };
    });
    hitl.create({ requestId: "approve", kind: "approval", payload: { toolName: "deploy" } });
    hitl.create({ requestId: "two", kind: "question", payload: { questions: ["a?", "b?"] } });
    await waitForEvent(session, (e) => e.type === "question.requested" && e.data.id === "two#2");
    process.kill(Number(textOf(await events(session), turn.turn)), "SIGKILL");
    const why = `the turn failed: ${(await turn.settled).error?.message}`;
    for (const id of ["approve", "two"])
      expect(await hitl.wait(id)).toMatchObject({ status: "cancelled", answers: { reason: why } });
    const ended = (await events(session)).filter(
      (e) => e.type === "question.answered" || e.type === "permission.resolved",
    );
    expect(ended.map((e) => [e.data.id, (e.data as { reason?: string }).reason])).toEqual(
      expect.arrayContaining(["approve", "two", "two#2"].map((id) => [id, why])),
    );
  });
});
