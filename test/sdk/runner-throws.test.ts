// A runner's request fails with whatever its handler threw, not only an Error: an object with no prototype, one
// whose message cannot be read, a bare `reject()`. Each is answered with brain_error naming it, and the runner serves
// on: reading the failure threw before (String() of a null-prototype object), an unhandled rejection that ended the
// runner process with every attachment's turn. A real runner process on the built SDK.
import { expect, it } from "vitest";
import { encodeLine } from "../../src/protocol/ndjson.js";
import { OPEN_PARAMS } from "./harness.js";
import { spawnSdkRunner, useSdkRunnerFiles } from "./runner-child.js";

const runnerFile = useSdkRunnerFiles();

const RUNNER = `
class Unreadable extends Error {
  get message() { throw new Error("no message"); }
}
serve({ open: () => ({ async prompt(text) {
  if (text === "null-prototype") throw Object.create(null);
  if (text === "unreadable") throw new Unreadable();
  if (text === "no-reason") await Promise.reject();
  if (text === "string") throw "plain words";
  return {};
}, checkpoint: () => [] }) });`;

it("answers every request whatever its handler threw, and the runner serves on", async () => {
  const { child, exited, answer } = spawnSdkRunner(runnerFile("brain-runner-throws-", RUNNER));
  const ask = (turn: string, text: string) => {
    const id = `p-${turn}`;
    child.stdin.write(encodeLine({ attachment: "A", turn, id, method: "prompt", params: { text } }));
    return answer(id, text);
  };
  child.stdin.write(encodeLine({ attachment: "A", id: "o1", method: "open", params: OPEN_PARAMS }));
  const brainError = (message: string) => ({ error: { code: "brain_error", message } });
  expect(await ask("T1", "null-prototype")).toMatchObject(
    brainError("prompt failed with [Object: null prototype] {}"),
  );
  expect(await ask("T2", "unreadable")).toMatchObject(
    brainError("prompt failed with an Error that could not be read"),
  );
  expect(await ask("T3", "no-reason")).toMatchObject(brainError("prompt failed with undefined"));
  expect(await ask("T4", "string")).toMatchObject(brainError("plain words"));
  expect(await ask("T5", "fine")).toMatchObject({ result: {} });
  child.stdin.end();
  await exited;
});
