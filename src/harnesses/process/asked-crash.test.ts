// A request waiting for a client when its runner dies: it ends with the turn, and says why (the runner's exit), not
// that a client interrupted it; whoever reads the log looks for the crash, and the answer it was waiting for is
// refused as it is no longer pending.
import { afterEach, describe, expect, it } from "vitest";
import { events, makeBrain, type TestBrain, textOf, waitForEvent } from "../../testing/brain.js";
import { inlineRunnerArgs } from "../../testing/inline-runner.js";
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

describe("a permission request pending when its runner dies", () => {
  it("is denied with the runner's exit as the reason, and takes no answer after", async () => {
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
});
