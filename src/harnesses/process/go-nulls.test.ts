// A Go runner (the seed's host types, encoding/json without omitempty) writes a nil pointer, map or slice as
// `null`, and no turn as `""`: the seed's Go host reads each as absent or empty, and Brain must run such a runner
// unchanged.
import { afterEach, describe, expect, it } from "vitest";
import { events, makeBrain, type TestBrain } from "../../testing/brain.js";
import { inlineRunnerArgs } from "../../testing/inline-runner.js";
import { ProcessFactory } from "./factory.js";

let t: TestBrain | undefined;
afterEach(async () => {
  await t?.cleanup();
  t = undefined;
});

/** A runner whose every reply also writes the member it does not use, and whose optional fields are `null`. */
const goRunner = inlineRunnerArgs(
  `const goReply = (f, result) => send({ attachment: f.attachment, turn: f.turn ?? (f.method === "open" ? null : ""), id: f.id, result, error: null });`,
  `
  if (f.method === "open") fs.writeFileSync(f.params.dir + "/a.jsonl", "x");
  if (f.method === "checkpoint") return goReply(f, [{ path: "a.jsonl", size: 1, append_only: null }]);
  if (f.method !== "prompt") return goReply(f, f.method === "open" ? null : {});
  const usage = { input: 3, output: 2, cache_read: null, cache_write: null, cost: null };
  send({ attachment: f.attachment, turn: f.turn, event: "assistant.message", data: { text: "one", usage: null, stop_reason: null } });
  send({ attachment: f.attachment, turn: f.turn, event: "assistant.message", data: { text: "two", usage, stop_reason: "stop" } });
  goReply(f, { interrupted: null });`,
);

describe("a Go runner's null fields", () => {
  it("are read as absent, as the seed's Go host reads them: the turn completes and the log has no nulls", async () => {
    const factory = new ProcessFactory({
      name: "go-nulls",
      command: process.execPath,
      args: goRunner,
      spares: 0,
      verifyHistory: false,
    });
    t = makeBrain({ factories: [factory] });
    const session = await t.brain.create({ harness: "go-nulls" });
    const turn = await session.prompt("go");
    expect(await turn.settled).toMatchObject({ status: "completed" });
    const all = await events(session);
    const messages = all.filter((e) => e.type === "assistant.message").map((e) => e.data);
    expect(messages).toStrictEqual([
      { text: "one" },
      { text: "two", usage: { input: 3, output: 2 }, stop_reason: "stop" },
    ]);
    const checkpoint = await session.checkpoint();
    expect(checkpoint.files).toMatchObject([{ path: "a.jsonl", size: 1, append_only: false }]);
  });
});
