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

/** A runner whose Go types say omitempty: it leaves out no arguments, an empty text, a zero count, a zero size. */
const omitemptyRunner = inlineRunnerArgs(
  "const waits = new Map();",
  `
  if (!f.method) return waits.get(f.id)?.(f.result);
  if (f.method === "open") fs.writeFileSync(f.params.dir + "/empty.jsonl", "");
  if (f.method === "checkpoint") return reply([{ path: "empty.jsonl" }]);
  if (f.method !== "prompt") return reply({});
  const result = await new Promise((done) => {
    waits.set("c1", done);
    send({ attachment: f.attachment, turn: f.turn, id: "c1", method: "tool.call", params: { id: "call-1", name: "echo" } });
  });
  send({ attachment: f.attachment, turn: f.turn, event: "assistant.message", data: { usage: { output: 2 }, stop_reason: "tool_use" } });
  send({ attachment: f.attachment, turn: f.turn, event: "assistant.delta", data: { text: "answered: " + result.is_error } });
  reply({});`,
).map((arg) => arg.replace("function handle(f)", "async function handle(f)"));

describe("a Go runner's omitempty fields", () => {
  it("are read as their zero values, as the seed's Go host reads them, instead of killing the runner", async () => {
    const factory = new ProcessFactory({
      name: "go-omitempty",
      command: process.execPath,
      args: omitemptyRunner,
      spares: 0,
      verifyHistory: false,
    });
    t = makeBrain({ factories: [factory] });
    const session = await t.brain.create({ harness: "go-omitempty", config: { tools: ["echo"] } });
    const turn = await session.prompt("go");
    expect(await turn.settled).toMatchObject({ status: "completed" });
    const all = await events(session);
    expect(all.find((e) => e.type === "tool.call")?.data).toStrictEqual({
      id: "call-1",
      name: "echo",
      arguments: {},
    });
    expect(all.find((e) => e.type === "assistant.message")?.data).toStrictEqual({
      text: "",
      usage: { input: 0, output: 2 },
      stop_reason: "tool_use",
    });
    const checkpoint = await session.checkpoint();
    expect(checkpoint.files).toMatchObject([{ path: "empty.jsonl", size: 0, append_only: false }]);
  });
});
