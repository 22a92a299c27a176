// A shared runner host serves several sessions from one process, one attachment each: every path on which Brain
// gives up on one attachment tells the runner (detach) once, or the runner keeps that attachment's state for ever.
import { afterEach, describe, expect, it } from "vitest";
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
 * Records every request it receives. "held" is answered at the next "frames"; "stuck" never is, interrupted or not; "reuse" sends two tool.call frames
 * with one frame id at once (calls of a tool that answers only when the test says: the first still awaits its answer
 * when the second is read, however the two lines are read); "frames" answers with what it received; any other prompt ends at once.
 */
const recordingRunner = inlineRunnerArgs(
  "const received = []; let held;",
  `
  if (!f.method) return;
  received.push({ attachment: f.attachment, method: f.method, session: f.params?.session_id });
  if (f.method !== "prompt") return reply(f.method === "checkpoint" ? [] : {});
  const delta = (g, text) => send({ attachment: g.attachment, turn: g.turn, event: "assistant.delta", data: { text } });
  switch (f.params.text) {
    case "held": held = f; return;
    case "stuck": delta(f, "stuck"); return;
    case "reuse":
      for (const id of ["a", "b"])
        send({ attachment: f.attachment, turn: f.turn, id: "f1", method: "tool.call", params: { id, name: "gated", arguments: {} } });
      return;
    case "frames":
      delta(f, JSON.stringify(received));
      reply({});
      if (held) { delta(held, "held on"); send({ attachment: held.attachment, turn: held.turn, id: held.id, result: {} }); held = undefined; }
      return;
    default: delta(f, "ok"); reply({});
  }`,
);

describe("a shared runner host", () => {
  it("is told to detach an attachment whose turn failed for a reused tool.call frame id, once; its other sessions go on", async () => {
    const factory = new ProcessFactory({
      name: "shared-inline",
      command: process.execPath,
      args: recordingRunner,
      shared: true,
      verifyHistory: false,
    });
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
    const received = async (session: typeof a): Promise<Received[]> => {
      const look = await session.prompt("frames");
      expect((await look.settled).status).toBe("completed");
      return JSON.parse(textOf(await events(session), look.turn)) as Received[];
    };
    const before = await received(a);
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
    expect(detached(await received(b))).toEqual(opens);
  });

  it("is told to detach an attachment whose interrupted turn it did not settle, once, and not again at close", async () => {
    const factory = new ProcessFactory({
      name: "shared-inline",
      command: process.execPath,
      args: recordingRunner,
      shared: true,
      verifyHistory: false,
      timeouts: { interruptGraceMs: 300 },
    });
    t = makeBrain({ factories: [factory] });
    const a = await t.brain.create({ harness: "shared-inline" });
    const b = await t.brain.create({ harness: "shared-inline" });
    const stuck = await a.prompt("stuck");
    await waitForEvent(a, (e) => e.type === "assistant.delta");
    await a.interrupt();
    expect((await stuck.settled).status).toBe("interrupted");
    const look = await b.prompt("frames");
    expect((await look.settled).status).toBe("completed");
    const first = (JSON.parse(textOf(await events(b), look.turn)) as Received[]).filter(
      (f) => f.method === "detach",
    );
    const opened = await (await a.prompt("again")).settled;
    expect(opened.status).toBe("completed");
    await t.brain.closeSession(a.id);
    const last = await b.prompt("frames");
    expect((await last.settled).status).toBe("completed");
    const received = JSON.parse(textOf(await events(b), last.turn)) as Received[];
    const opens = received.filter((f) => f.method === "open" && f.session === a.id).map((f) => f.attachment);
    expect(first.map((f) => f.attachment)).toEqual([opens[0]]);
    expect(received.filter((f) => f.method === "detach").map((f) => f.attachment)).toEqual(opens);
  });
});
