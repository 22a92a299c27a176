// Steering a running turn takes a bounded share: a harness holds each steer until it can use it, so a client
// steering without end must be refused, not held in the daemon's memory.
import { afterEach, describe, expect, it } from "vitest";
import { FsSessionStore } from "../store/fs/index.js";
import { events, makeBrain, type TestBrain } from "../testing/brain.js";
import { holdWriteOf } from "../testing/held-write.js";
import { BuiltinTools } from "../tools/builtin.js";
import { ToolRouter } from "../tools/router.js";
import { Brain } from "./brain.js";
import type { HarnessFactory } from "./harness.js";
import { HarnessRegistry } from "./registry.js";
import { STEER_LIMITS } from "./running-turn.js";

/** A harness whose turn runs until it is interrupted, holding every steer it is given (as the api harness does). */
function holdsSteers(held: string[]): HarnessFactory {
  return {
    name: "holding",
    supportsSteering: true,
    async open() {
      return {
        prompt: (_text, ctx) =>
          new Promise((resolve) =>
            ctx.signal.addEventListener("abort", () => resolve({ interrupted: true })),
          ),
        steer: async (text) => {
          held.push(text);
        },
        interrupt: async () => {},
        checkpoint: async () => [],
        close: async () => {},
      };
    },
  };
}

let t: TestBrain;
afterEach(async () => {
  await t?.cleanup();
});

describe("steering one turn", () => {
  it(`takes ${STEER_LIMITS.count} steers, refuses the next naming the limit, and the next turn steers again`, async () => {
    const held: string[] = [];
    t = makeBrain({ factories: [holdsSteers(held)] });
    const session = await t.brain.create({ harness: "holding" });
    const first = await session.prompt("go");
    for (let i = 0; i < STEER_LIMITS.count; i++) await session.steer(`steer ${i}`);
    await expect(session.steer("one more")).rejects.toMatchObject({
      code: "limit_reached",
      message: expect.stringMatching(
        new RegExp(`a turn takes at most ${STEER_LIMITS.count} steers .*send the rest as a prompt`),
      ),
    });
    expect(held).toHaveLength(STEER_LIMITS.count);
    const logged = (await events(session)).filter((e) => e.type === "user.steer");
    expect(logged).toHaveLength(STEER_LIMITS.count);
    await session.interrupt();
    await first.settled;
    await session.prompt("again");
    await session.steer("a new turn's steer");
    expect(held.at(-1)).toBe("a new turn's steer");
    await session.interrupt();
  });

  it(`refuses a steer that takes the turn's steering past ${STEER_LIMITS.bytes >> 20} MiB`, async () => {
    const held: string[] = [];
    t = makeBrain({ factories: [holdsSteers(held)] });
    const session = await t.brain.create({ harness: "holding" });
    const turn = await session.prompt("go");
    const half = "x".repeat(STEER_LIMITS.bytes / 2);
    await session.steer(half);
    await session.steer(half);
    await expect(session.steer("x")).rejects.toThrow(/has taken 2 steers \(16 MiB\)/);
    expect(held).toHaveLength(2);
    await session.interrupt();
    expect((await turn.settled).status).toBe("interrupted");
  });
});

describe("a steer that comes as the turn ends", () => {
  it("is refused once the harness has ended the turn, not logged after its turn.settled", async () => {
    // turn.settled's write waits until the test lets it go: the steer comes in between.
    const { io, held, release } = holdWriteOf("turn.settled");
    const got: string[] = [];
    const quick: HarnessFactory = { ...holdsSteers(got), name: "quick" };
    quick.open = async (options) => ({
      ...(await holdsSteers(got).open(options)),
      prompt: async () => ({ interrupted: false }),
    });
    t = makeBrain();
    const brain = new Brain({
      store: new FsSessionStore(t.home, io),
      harnesses: new HarnessRegistry([quick]),
      tools: new ToolRouter([new BuiltinTools()]),
    });
    try {
      const session = await brain.create({ harness: "quick" });
      const turn = await session.prompt("hi");
      await held;
      const steer = session.steer("late");
      release();
      await expect(session.prompt("next")).rejects.toThrow(/is settling: prompt again once its turn.settled/);
      await expect(steer).rejects.toThrow(`nothing to steer: turn ${turn.turn} has ended`);
      expect((await turn.settled).status).toBe("completed");
      expect(got).toEqual([]);
      expect((await events(session)).map((e) => e.type).slice(-1)).toEqual(["turn.settled"]);
    } finally {
      await brain.close();
    }
  });
});
