// A turn ends at the runner's reply to its prompt: what the runner writes for it after that is a warning and
// dropped, wherever the pipe happened to cut its output into reads.
import { afterEach, describe, expect, it } from "vitest";
import { events, makeBrain, type TestBrain, textOf } from "../../testing/brain.js";
import { inlineRunnerArgs } from "../../testing/inline-runner.js";
import { ProcessFactory } from "./factory.js";

let t: TestBrain | undefined;
afterEach(async () => {
  await t?.cleanup();
  t = undefined;
});

describe("frames for a turn whose prompt was answered", () => {
  it("are dropped with a warning even when they come in the same read as the answer", async () => {
    // One write: the reply, then a delta, a message and a tool call for the turn it has just ended.
    const args = inlineRunnerArgs(
      "",
      `
  if (!f.method) return; // the refusal of its late tool call
  if (f.method !== "prompt") return reply(f.method === "checkpoint" ? [] : {});
  const head = { attachment: f.attachment, turn: f.turn };
  const lines = [
    { ...head, event: "assistant.delta", data: { text: "in time " } },
    { ...head, id: f.id, result: {} },
    { ...head, event: "assistant.delta", data: { text: "too late" } },
    { ...head, event: "assistant.message", data: { text: "too late" } },
    { ...head, id: "late-call", method: "tool.call", params: { id: "late-1", name: "echo", arguments: {} } },
  ];
  process.stdout.write(lines.map((l) => JSON.stringify(l) + "\\n").join(""));`,
    );
    const factory = new ProcessFactory({
      name: "late",
      command: process.execPath,
      args,
      spares: 0,
      verifyHistory: false,
    });
    t = makeBrain({ factories: [factory] });
    const session = await t.brain.create({ harness: "late", config: { tools: ["echo"] } });
    const turn = await session.prompt("go");
    expect((await turn.settled).status).toBe("completed");
    const all = await events(session);
    expect(textOf(all, turn.turn)).toBe("in time ");
    expect(all.filter((e) => e.type === "assistant.message" || e.type === "tool.call")).toEqual([]);
    const warnings = all
      .filter((e) => e.type === "harness.warning")
      .map((e) => (e.data as { message: string }).message);
    expect(warnings).toEqual(
      ['"assistant.delta" event', '"assistant.message" event', 'tool.call "echo"'].map(
        (what) =>
          `${what} for turn "${turn.turn}", which has ended (its prompt was answered); ${what.startsWith("tool") ? "refused" : "ignored"}`,
      ),
    );
  });
});
