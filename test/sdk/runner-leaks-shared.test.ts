// Through Brain: a shared runner host (one process, one attachment per session) on the built TypeScript runner SDK,
// whose code leaves a rejected promise unhandled in one session's turn. That turn fails with the rejection named; the
// other session's turn, running in the same process meanwhile, completes, and the process serves on.
import { afterEach, expect, it } from "vitest";
import { ProcessFactory } from "../../src/harnesses/process/factory.js";
import { events, makeBrain, type TestBrain, textOf, waitForEvent } from "../../src/testing/brain.js";
import { LEAK_MADE, LEAK_OR_WAIT, useSdkRunnerFiles } from "./runner-child.js";

// Registered first: its directories are removed after Brain's cleanup (after-each hooks run last-registered first).
const runnerFile = useSdkRunnerFiles();
let t: TestBrain | undefined;
afterEach(async () => {
  await t?.cleanup();
  t = undefined;
});

// "leak" and "wait" as LEAK_OR_WAIT says. Every answer says which process gave it.
const RUNNER = `
${LEAK_MADE}
serve({ open: () => ({ async prompt(text, turn) {
  await turn.delta("started ");
  ${LEAK_OR_WAIT}
  await turn.delta("by " + process.pid);
  return {};
}, checkpoint: () => [] }) });`;

it("fails the leaking session's turn alone; the other session's turn on the same runner process completes", async () => {
  const runner = runnerFile("brain-runner-leaks-shared-", RUNNER);
  const factory = new ProcessFactory({
    name: "shared-leaky",
    command: process.execPath,
    args: [runner],
    shared: true,
    verifyHistory: false,
  });
  t = makeBrain({ factories: [factory] });
  const a = await t.brain.create({ harness: "shared-leaky" });
  const b = await t.brain.create({ harness: "shared-leaky" });
  const waiting = await b.prompt("wait");
  await waitForEvent(b, (e) => e.type === "assistant.delta");
  const leaking = await a.prompt("leak");

  expect(await leaking.settled).toMatchObject({
    status: "failed",
    error: {
      code: "brain_error",
      message: expect.stringContaining("an unhandled promise rejection in turn"),
    },
  });
  expect((await leaking.settled).error?.message).toMatch(/: Error: leaked in a timer$/);
  expect((await waiting.settled).status).toBe("completed");
  const served = textOf(await events(b), waiting.turn);
  expect(served).toMatch(/^started by \d+$/);
  // The leaking session goes on, on the same process.
  const again = await a.prompt("again");
  expect((await again.settled).status).toBe("completed");
  expect(textOf(await events(a), again.turn)).toBe(served);
});
