// The runner SDK's host (sdk/ts/leaks.ts) when a runner's code leaves a rejected promise unhandled: Node ends the
// process for it by default, and a shared runner process serves every attachment (session) Brain gives it. Made
// within a turn it fails that turn alone; made outside every turn, or after its turn was answered, it is written to
// stderr; the runner serves on. A real runner process on the built SDK, two attachments.
import { expect, it } from "vitest";
import { encodeLine } from "../../src/protocol/ndjson.js";
import { OPEN_PARAMS } from "./harness.js";
import { LEAK_MADE, LEAK_OR_WAIT, spawnSdkRunner, useSdkRunnerFiles } from "./runner-child.js";

const runnerFile = useSdkRunnerFiles();

// "leak" and "wait" as LEAK_OR_WAIT says; "late" leaks in a timer after its turn has been answered.
const RUNNER = `
${LEAK_MADE}
// Outside every turn: rejected as the module loads, handled by nobody.
setTimeout(() => Promise.reject(new Error("stray leak")), 0);
serve({ open: () => ({ async prompt(text, turn) {
  await turn.delta("starting");
  ${LEAK_OR_WAIT}
  if (text === "late") setTimeout(() => Promise.reject(new Error("late leak")), 0);
  await turn.delta("fine");
  return {};
}, checkpoint: () => [] }) });`;

it("fails only the turn a leaked rejection was made in; another attachment's turn completes and the runner serves on", async () => {
  const { child, exited, stderr, frames, answer } = spawnSdkRunner(runnerFile("brain-runner-leaks-", RUNNER));
  const prompt = (attachment: string, turn: string, text: string) => {
    child.stdin.write(encodeLine({ attachment, turn, id: `p-${turn}`, method: "prompt", params: { text } }));
    return answer(`p-${turn}`);
  };
  const deltas = (turn: string) =>
    frames()
      .filter((frame) => frame.turn === turn && frame.event === "assistant.delta")
      .map((frame) => frame.data.text);

  for (const attachment of ["A", "B"]) {
    child.stdin.write(encodeLine({ attachment, id: `o-${attachment}`, method: "open", params: OPEN_PARAMS }));
    expect(await answer(`o-${attachment}`)).toMatchObject({ result: {} });
  }
  // B's turn goes on only once A's leak has been made.
  const [waited, leaked] = await Promise.all([prompt("B", "TB", "wait"), prompt("A", "TA", "leak")]);
  expect(waited).toMatchObject({ attachment: "B", turn: "TB", result: {} });
  expect(deltas("TB")).toEqual(["starting", "fine"]);
  expect(leaked).toMatchObject({ attachment: "A", turn: "TA", error: { code: "brain_error" } });
  expect(leaked.error.message).toBe("an unhandled promise rejection in turn TA: Error: leaked in a timer");
  await expect
    .poll(() => stderr())
    .toMatch(/an unhandled promise rejection outside any turn .*Error: stray leak/);

  expect(await prompt("B", "TB2", "late")).toMatchObject({ result: {} });
  await expect
    .poll(() => stderr(), { timeout: 10_000 })
    .toMatch(/turn TB2 .*after it was answered.*late leak/);
  // A's attachment is not lost with its turn.
  expect(await prompt("A", "TA2", "again")).toMatchObject({ result: {} });
  expect(deltas("TA2")).toEqual(["starting", "fine"]);
  child.stdin.end();
  expect(await exited).toBe(0);
});
