import { afterEach, describe, expect, it } from "vitest";
import { events, makeBrain, type TestBrain } from "../testing/brain.js";
import { HarnessError, type HarnessFactory } from "./harness.js";
import { SessionError } from "./session.js";

let t: TestBrain;
afterEach(async () => {
  await t?.cleanup();
});

/** A harness that records what reaches it; `open` waits for `gate`, `steer` does what `onSteer` says. */
function recordingFactory(gate: Promise<void>, onSteer: (turn: string) => Promise<void>) {
  const heard: string[] = [];
  let finish = () => {};
  const factory: HarnessFactory = {
    name: "rec",
    supportsSteering: true,
    async open() {
      heard.push("opening");
      await gate; // a runner process still starting
      return {
        prompt: async (text) => {
          heard.push(`prompt ${text}`);
          await new Promise<void>((resolve) => {
            finish = resolve;
          });
          return { interrupted: false };
        },
        steer: async (text, turn) => {
          heard.push(`steer ${text}`);
          await onSteer(turn);
        },
        interrupt: async () => finish(),
        checkpoint: async () => [],
        close: async () => {},
      };
    },
  };
  return { factory, heard, finish: () => finish() };
}

describe("a steer", () => {
  it("sent while the turn's harness is still starting reaches it after the prompt, not nowhere", async () => {
    let open = () => {};
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    const rec = recordingFactory(gate, async () => {});
    t = makeBrain({ factories: [rec.factory] });
    const session = await t.brain.create({ harness: "rec" });
    const turn = await session.prompt("hi");
    while (!rec.heard.includes("opening")) await new Promise((resolve) => setImmediate(resolve));
    const steering = session.steer("go left");
    for (let i = 0; i < 10; i++) await new Promise((resolve) => setImmediate(resolve));
    open();
    await steering;
    expect(rec.heard).toEqual(["opening", "prompt hi", "steer go left"]);
    rec.finish();
    expect((await turn.settled).status).toBe("completed");
  });

  it("sent while the harness starts and then fails to start is refused and never logged", async () => {
    let fail = (_err: Error) => {};
    const gate = new Promise<void>((_resolve, reject) => {
      fail = reject;
    });
    const rec = recordingFactory(gate, async () => {});
    t = makeBrain({ factories: [rec.factory] });
    const session = await t.brain.create({ harness: "rec" });
    const turn = await session.prompt("hi");
    while (!rec.heard.includes("opening")) await new Promise((resolve) => setImmediate(resolve));
    const steering = session.steer("go left").catch((err: unknown) => err);
    for (let i = 0; i < 10; i++) await new Promise((resolve) => setImmediate(resolve));
    fail(new Error("runner exited before it was ready"));
    expect(await steering).toMatchObject({ code: "conflict" });
    expect((await turn.settled).status).toBe("failed");
    const logged = await events(session);
    expect(logged.map((e) => e.type)).not.toContain("user.steer");
  });

  it("refused by a harness whose turn has just ended is a conflict, not a harness failure", async () => {
    let finish = () => {};
    const rec = recordingFactory(Promise.resolve(), async (turn) => {
      // As sdk/ts/host.ts answers a steer that comes after its turn ended: the prompt's answer went first.
      finish();
      throw new HarnessError("brain_error", `turn ${turn} is not running`);
    });
    finish = rec.finish;
    t = makeBrain({ factories: [rec.factory] });
    const session = await t.brain.create({ harness: "rec" });
    const turn = await session.prompt("hi");
    const refused = await session.steer("too late").catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(SessionError);
    expect(refused).toMatchObject({ code: "conflict" });
    expect((await turn.settled).status).toBe("completed");
  });
});
