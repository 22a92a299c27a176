// Closing a session while a turn runs: the turn ends in the log before the session does.
import { afterEach, describe, expect, it } from "vitest";
import { makeBrain, type TestBrain } from "../testing/brain.js";
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
