// A runner's reverse tool calls are each answered once: the session hands the result on as soon as it has it
// (before logging it), and the call's promise, which settles after, must not answer it again.
import { afterEach, describe, expect, it } from "vitest";
import { events, makeBrain, type TestBrain, textOf } from "../../testing/brain.js";
import { inlineRunnerArgs } from "../../testing/inline-runner.js";
import { ProcessFactory } from "./factory.js";

let t: TestBrain;
afterEach(async () => {
  await t?.cleanup();
});

/**
 * Calls echo as c1, then as c2 once c1 is answered, and says how many answers each got: Brain writes answers in
 * order, so a second answer to c1 would be read before c2's.
 */
const twoCalls = inlineRunnerArgs(
  "const answers = new Map(); const waits = new Map();",
  `
  if (!f.method) { answers.set(f.id, (answers.get(f.id) ?? 0) + 1); waits.get(f.id)?.(f.result); return; }
  const call = (id) => new Promise((res) => {
    waits.set(id, res);
    send({ attachment: f.attachment, turn: f.turn, id, method: "tool.call", params: { id, name: "echo", arguments: { value: id } } });
  });
  if (f.method !== "prompt") return reply(f.method === "checkpoint" ? [] : {});
  (async () => {
    const first = await call("c1");
    const second = await call("c2");
    const text = first.content[0].text + second.content[0].text + " " + answers.get("c1") + " " + answers.get("c2");
    send({ attachment: f.attachment, turn: f.turn, event: "assistant.delta", data: { text } });
    reply({});
  })();`,
);

describe("a runner's tool calls", () => {
  it("are answered once each, with the result the log keeps", async () => {
    const factory = new ProcessFactory({ name: "inline", command: process.execPath, args: twoCalls });
    t = makeBrain({ factories: [factory] });
    const session = await t.brain.create({ harness: "inline", config: { tools: ["echo"] } });
    expect((await (await session.prompt("go")).settled).status).toBe("completed");
    const all = await events(session);
    expect(textOf(all)).toBe("c1c2 1 1");
    const results = all.filter((e) => e.type === "tool.result").map((e) => e.data);
    // The log's result is the one the runner read (echo gives back the call's id).
    expect(results).toMatchObject([
      { id: "c1", content: [{ type: "text", text: "c1" }] },
      { id: "c2", content: [{ type: "text", text: "c2" }] },
    ]);
  });
});

/**
 * On "reuse", calls echo as frame f1 twice (tool call ids a and b) at once, and ends the prompt once f1 has two
 * answers, saying what they were; any other prompt ends at once. Both frames go in one write, which Brain reads as
 * one chunk: the first call still awaits its answer when the second is read (written apart, on a loaded machine
 * the first was answered in between once, and the turn completed).
 */
const reusedFrameId = inlineRunnerArgs(
  "const got = []; let done;",
  `
  if (!f.method) { got.push(f.result.content[0].text); if (got.length === 2) done(); return; }
  if (f.method !== "prompt") return reply(f.method === "checkpoint" ? [] : {});
  if (f.params.text !== "reuse") return reply({});
  done = () => { send({ attachment: f.attachment, turn: f.turn, event: "assistant.delta", data: { text: got.join(",") } }); reply({}); };
  const call = (id) => JSON.stringify({ attachment: f.attachment, turn: f.turn, id: "f1", method: "tool.call", params: { id, name: "echo", arguments: { value: id } } }) + "\\n";
  process.stdout.write(call("a") + call("b"));`,
);

describe("a runner that reuses the frame id of a tool call still awaiting its answer", () => {
  it("fails its turn with a brain_error naming the id, as the answers could go to the wrong call; the next turn runs", async () => {
    const factory = new ProcessFactory({
      name: "inline",
      command: process.execPath,
      args: reusedFrameId,
      verifyHistory: false,
    });
    t = makeBrain({ factories: [factory] });
    const session = await t.brain.create({ harness: "inline", config: { tools: ["echo"] } });
    const outcome = await (await session.prompt("reuse")).settled;
    expect(outcome).toMatchObject({
      status: "failed",
      error: {
        code: "brain_error",
        message: expect.stringMatching(/second tool\.call "f1" while the first awaits its answer/),
      },
    });
    // The second call never ran: the log holds the first, answered.
    const calls = (await events(session)).filter((e) => e.type === "tool.call").map((e) => e.data);
    expect(calls).toMatchObject([{ id: "a" }]);
    expect((await (await session.prompt("after")).settled).status).toBe("completed");
  });
});
