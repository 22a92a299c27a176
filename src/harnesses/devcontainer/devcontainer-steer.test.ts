// A dev container's session steers as its inner harness does: the devcontainer factory runs whichever harness a
// session names, so whether a steer is taken (and logged as queued) is that harness's to say.
import { describe, expect, it } from "vitest";
import { events } from "../../testing/brain.js";
import { useFakeDocker } from "../../testing/nui.js";

const scratch = useFakeDocker();

function brain() {
  const home = scratch.scratch("brain-devc-home-");
  const echo = scratch.echoInside();
  const factories = scratch.devcontainers(home, { echo, "echo-unsteered": { ...echo, steering: false } });
  return scratch.brain({ factories }).brain;
}

/** A devcontainer session on `innerHarness` whose turn streams slowly, with that turn running. */
async function running(innerHarness: string) {
  const session = await brain().create({
    harness: "devcontainer",
    config: { options: { innerHarness, delay_ms: 60_000 } },
  });
  const turn = await session.prompt("one two three");
  return { session, turn };
}

describe("steering a dev container's session", () => {
  it("is refused when the inner harness takes no steers", async () => {
    const { session, turn } = await running("echo-unsteered");
    await expect(session.steer("and then")).rejects.toThrow(
      'harness "devcontainer" does not support steering',
    );
    await session.interrupt();
    expect(await turn.settled).toMatchObject({ status: "interrupted" });
    expect((await events(session)).some((e) => e.type === "user.steer")).toBe(false);
  });

  it("is taken, and logged live, when the inner harness steers", async () => {
    const { session, turn } = await running("echo");
    await session.steer("and then");
    await session.interrupt();
    await turn.settled;
    const steer = (await events(session)).find((e) => e.type === "user.steer");
    expect(steer?.data).toEqual({ text: "and then" });
  });
});
