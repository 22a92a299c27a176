// A shared runner host serves several sessions from one process, one attachment each: every path on which Brain
// gives up on one attachment tells the runner (detach) once, or the runner keeps that attachment's state for ever.
import { afterEach, describe, expect, it } from "vitest";
import type { Session } from "../../core/session.js";
import type { ToolService } from "../../core/tools.js";
import { events, gatedTool, makeBrain, type TestBrain, textOf, waitForEvent } from "../../testing/brain.js";
import { inlineRunnerArgs } from "../../testing/inline-runner.js";
import { ProcessFactory } from "./factory.js";

let t: TestBrain | undefined;
afterEach(async () => {
  await t?.cleanup();
  t = undefined;
});

interface Received {
  attachment: string;
  method: string;
  session?: string;
}

/**
 * Records every request it receives, and each tool result as method "(result)". "held" is answered at the next "frames"; "stuck" never is, interrupted or not; "reuse" sends two tool.call frames
 * with one frame id at once (calls of a tool that answers only when the test says: the first still awaits its answer
 * when the second is read, however the two lines are read); "call" sends one tool.call
 * (frame id "f1") and "call again", another session's prompt, sends a second one with that frame id for the same turn;
 * "frames" answers with what it received; any other prompt ends at once.
 */
const recordingRunner = inlineRunnerArgs(
  "const received = []; let held; let calling;",
  `
  if (!f.method) return void received.push({ attachment: f.attachment, method: "(result)", id: f.id });
  received.push({ attachment: f.attachment, method: f.method, session: f.params?.session_id });
  if (f.method !== "prompt") return reply(f.method === "checkpoint" ? [] : {});
  const call = (g, id) => ({ attachment: g.attachment, turn: g.turn, id: "f1", method: "tool.call", params: { id, name: "gated", arguments: {} } });
  const delta = (g, text) => send({ attachment: g.attachment, turn: g.turn, event: "assistant.delta", data: { text } });
  switch (f.params.text) {
    case "held": held = f; return;
    case "stuck": delta(f, "stuck"); return;
    case "reuse":
      for (const id of ["a", "b"]) send(call(f, id));
      return;
    case "call": calling = f; return send(call(f, "f1"));
    case "call again": send(call(calling, "f1")); return reply({});
    case "frames":
      delta(f, JSON.stringify(received));
      reply({});
      if (held) { delta(held, "held on"); send({ attachment: held.attachment, turn: held.turn, id: held.id, result: {} }); held = undefined; }
      return;
    default: delta(f, "ok"); reply({});
  }`,
);

/** A shared runner host on the recording runner. */
const sharedInline = (timeouts?: { interruptGraceMs: number }) =>
  new ProcessFactory({
    name: "shared-inline",
    command: process.execPath,
    args: recordingRunner,
    shared: true,
    verifyHistory: false,
    ...(timeouts ? { timeouts } : {}),
  });

/** What the runner has received so far, as it answers a prompt "frames" of `session` (a fresh attachment). */
const receivedBy = async (session: Session): Promise<Received[]> => {
  const look = await session.prompt("frames");
  expect((await look.settled).status).toBe("completed");
  return JSON.parse(textOf(await events(session), look.turn)) as Received[];
};

describe("a shared runner host", () => {
  it("is told to detach an attachment whose turn failed for a reused tool.call frame id, once; its other sessions go on", async () => {
    const factory = sharedInline();
    const { tools: gated, open } = gatedTool();
    t = makeBrain({ factories: [factory], tools: [gated] });
    const a = await t.brain.create({ harness: "shared-inline", config: { tools: ["gated"] } });
    const b = await t.brain.create({ harness: "shared-inline" });
    const held = await b.prompt("held");
    await waitForEvent(b, (e) => e.type === "turn.started");

    const failed = await (await a.prompt("reuse")).settled;
    expect(failed).toMatchObject({
      status: "failed",
      error: { code: "brain_error", message: expect.stringMatching(/second tool\.call "f1"/) },
    });
    open();
    // a's next prompt opens a fresh attachment on the same runner, which says what it has received so far.
    const before = await receivedBy(a);
    const opens = before.filter((f) => f.method === "open" && f.session === a.id).map((f) => f.attachment);
    expect(opens).toHaveLength(2);
    const detached = (frames: Received[]) =>
      frames.filter((f) => f.method === "detach").map((f) => f.attachment);
    expect(detached(before)).toEqual([opens[0]]);

    // b's turn, running all along on the same process, is answered and ends; b goes on.
    expect((await held.settled).status).toBe("completed");
    expect(textOf(await events(b), held.turn)).toBe("held on");
    const again = await b.prompt("again");
    expect((await again.settled).status).toBe("completed");
    expect(textOf(await events(b), again.turn)).toBe("ok");

    // Closing a detaches its second attachment; the first, already detached, is not detached again.
    await t.brain.closeSession(a.id);
    expect(detached(await receivedBy(b))).toEqual(opens);
  });

  it("is told to detach an attachment whose interrupted turn it did not settle, once, and not again at close", async () => {
    const factory = sharedInline({ interruptGraceMs: 300 });
    t = makeBrain({ factories: [factory] });
    const a = await t.brain.create({ harness: "shared-inline" });
    const b = await t.brain.create({ harness: "shared-inline" });
    const stuck = await a.prompt("stuck");
    await waitForEvent(a, (e) => e.type === "assistant.delta");
    await a.interrupt();
    expect((await stuck.settled).status).toBe("interrupted");
    const first = (await receivedBy(b)).filter((f) => f.method === "detach");
    const opened = await (await a.prompt("again")).settled;
    expect(opened.status).toBe("completed");
    await t.brain.closeSession(a.id);
    const received = await receivedBy(b);
    const opens = received.filter((f) => f.method === "open" && f.session === a.id).map((f) => f.attachment);
    expect(first.map((f) => f.attachment)).toEqual([opens[0]]);
    expect(received.filter((f) => f.method === "detach").map((f) => f.attachment)).toEqual(opens);
  });

  it("drops the answers of a detached attachment's running tool calls, aborting them; its other sessions go on", async () => {
    const factory = sharedInline();
    // Ends at its abort or when opened, either way with a result; `ended` resolves once that result is taken
    // (a macrotask later than the microtasks that hand it to the harness, which would send it at once).
    const { tools: gated, open } = gatedTool();
    let ending: string | undefined;
    let started: () => void = () => {};
    const startedOnce = new Promise<void>((resolve) => {
      started = resolve;
    });
    let ended: () => void = () => {};
    const endedOnce = new Promise<void>((resolve) => {
      ended = resolve;
    });
    const tool: ToolService = {
      list: gated.list,
      call: (_name, _args, signal) =>
        new Promise((resolve) => {
          const end = (how: string) => {
            ending ??= how;
            resolve({ content: [{ type: "text", text: how }], is_error: false });
            setImmediate(ended);
          };
          signal.addEventListener("abort", () => end("aborted"), { once: true });
          gated.call("gated", {}, signal).then(() => end("returned"));
          started();
        }),
    };
    t = makeBrain({ factories: [factory], tools: [tool] });
    const a = await t.brain.create({ harness: "shared-inline", config: { tools: ["gated"] } });
    const b = await t.brain.create({ harness: "shared-inline" });
    const calling = await a.prompt("call");
    await startedOnce;
    // The runner reuses the running call's frame id: Brain gives a's attachment up (detach) with its call running.
    expect((await (await b.prompt("call again")).settled).status).toBe("completed");
    const failed = await calling.settled;
    expect(failed).toMatchObject({
      status: "failed",
      error: { message: expect.stringMatching(/second tool\.call/) },
    });
    open();
    await endedOnce;

    const received = await receivedBy(b);
    const [first] = received.filter((f) => f.method === "open").map((f) => f.attachment);
    expect(received.filter((f) => f.attachment === first).map((f) => f.method)).toEqual([
      "open",
      "prompt",
      "detach",
    ]);
    expect(ending).toBe("aborted");
  });
});
