// Closing a session while a turn runs: the turn ends in the log before the session does.
import { afterEach, describe, expect, it } from "vitest";
import { makeBrain, standIn, type TestBrain } from "../testing/brain.js";
import type { HarnessFactory } from "./harness.js";

let t: TestBrain;
afterEach(async () => {
  await t?.cleanup();
});

/** As a CLI family does: interrupt() asks the agent to stop and returns; the prompt ends once the agent has. */
const lagging: HarnessFactory = {
  name: "lagging",
  supportsSteering: false,
  async open() {
    return {
      prompt: (_text, ctx) =>
        new Promise((resolve) =>
          ctx.signal.addEventListener("abort", () =>
            setTimeout(() => setImmediate(() => resolve({ interrupted: true }))),
          ),
        ),
      steer: async () => {},
      interrupt: async () => {},
      checkpoint: async () => [],
      close: async () => {},
    };
  },
};

describe("closing a session while a turn runs", () => {
  it("logs the turn's one turn.settled before session.closed, also when the harness ends it after its interrupt", async () => {
    t = makeBrain({ factories: [lagging] });
    const session = await t.brain.create({ harness: "lagging" });
    const turn = await session.prompt("hi");
    await t.brain.closeSession(session.id);
    expect(await turn.settled).toEqual({ turn: turn.turn, status: "interrupted" });
    const types = (await t.brain.events(session.id)).map((e) => e.type);
    expect(types.slice(-4)).toEqual(["turn.started", "user.interrupt", "turn.settled", "session.closed"]);
    // Opened again, nothing is left to close out: the turn ended as it was logged.
    await t.brain.session(session.id);
    const settled = (await t.brain.events(session.id)).filter((e) => e.type === "turn.settled");
    expect(settled.map((e) => e.data)).toEqual([{ status: "interrupted" }]);
  });
});

/** A harness whose close() ends only once the test lets it, and how many closes have begun. */
function gatedClose() {
  let release = () => {};
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  const closes = { begun: 0 };
  const factory = standIn("gated", {
    close: () => {
      closes.begun++;
      return released;
    },
  });
  return { factory, release, closes };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe("closing a session twice at once", () => {
  it("ends the second close only once the first has closed the log", async () => {
    const gated = gatedClose();
    t = makeBrain({ factories: [gated.factory] });
    const session = await t.brain.create({ harness: "gated" });
    await session.start();
    const first = session.close();
    while (gated.closes.begun === 0) await tick();
    let secondEnded = false;
    const second = session.close().then(() => {
      secondEnded = true;
    });
    await tick();
    // A delete awaiting it would otherwise remove the session's files from under a log still open.
    expect(secondEnded).toBe(false);
    gated.release();
    await Promise.all([first, second]);
    expect((await t.store.readEvents(session.id, { after: 0 })).at(-1)?.type).toBe("session.closed");
  });

  it("closes and deletes a session asked for both at once: the delete waits for the close, and both succeed", async () => {
    const gated = gatedClose();
    t = makeBrain({ factories: [gated.factory] });
    const session = await t.brain.create({ harness: "gated" });
    await session.start();
    const closing = t.brain.closeSession(session.id);
    while (gated.closes.begun === 0) await tick();
    const deleting = t.brain.delete(session.id);
    await tick();
    gated.release();
    await expect(Promise.all([closing, deleting])).resolves.toBeDefined();
    expect(await t.store.get(session.id)).toBeUndefined();
    expect(gated.closes.begun).toBe(1);
  });
});

describe("a session reopened while its close records it closed", () => {
  it("is recorded open: the record never says closed while the session runs", async () => {
    t = makeBrain();
    const session = await t.brain.create({ harness: "echo" });
    // The close's write of status "closed" waits until the session has been opened again and prompted.
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let holding = false;
    const update = t.store.update.bind(t.store);
    t.store.update = async (id, patch) => {
      if (typeof patch !== "function" && patch.status === "closed" && !holding) {
        holding = true;
        await held;
      }
      return update(id, patch);
    };
    const closing = t.brain.closeSession(session.id);
    while (!holding) await tick();
    const prompted = t.brain.session(session.id).then((live) => live.prompt("hi"));
    await prompted.then(
      () => {},
      () => {},
    );
    release();
    await closing;
    const outcome = await prompted.then(
      (started) => started.settled,
      (err: Error) => err,
    );
    const record = await t.store.get(session.id);
    // Refused as closed while the close ran, or run on a session recorded open: never run under "closed".
    if (outcome instanceof Error) expect(outcome.message).toMatch(/was closed while/);
    else expect(record?.status).toBe("open");
    expect(Boolean(t.brain.liveSession(session.id)) && record?.status === "closed").toBe(false);
  });
});
