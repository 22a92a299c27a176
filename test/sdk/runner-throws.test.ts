// A runner's request fails with whatever its handler threw, not only an Error: an object with no prototype, one
// whose message cannot be read, a bare `reject()`. Each is answered with brain_error naming it, and the runner serves
// on: reading the failure threw before (String() of a null-prototype object), an unhandled rejection that ended the
// runner process with every attachment's turn. A real runner process on the built SDK.
import { spawn } from "node:child_process";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { decodeRunnerFrame } from "../../src/protocol/frames.js";
import { encodeLine } from "../../src/protocol/ndjson.js";
import { tempDir } from "../../src/testing/brain.js";
import { root } from "../../src/testing/nui.js";
import { type Frame, OPEN_PARAMS } from "./harness.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

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
  const dir = tempDir("brain-runner-throws-");
  dirs.push(dir);
  const runner = join(dir, "runner.mjs");
  writeFileSync(
    runner,
    `import { serve } from ${JSON.stringify(join(root, "dist/sdk/ts/index.js"))};\n${RUNNER}`,
  );
  const child = spawn(process.execPath, [runner], { stdio: ["pipe", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk;
  });
  child.stdout.on("data", (chunk: Buffer) => {
    stdout += chunk;
  });
  const exited = new Promise((resolve) => child.on("exit", resolve));
  const frames = () =>
    stdout
      .split("\n")
      .filter(Boolean)
      .map((line) => decodeRunnerFrame(line) as Frame);
  const ask = async (turn: string, text: string) => {
    const id = `p-${turn}`;
    child.stdin.write(encodeLine({ attachment: "A", turn, id, method: "prompt", params: { text } }));
    let exitedFirst = false;
    void exited.then(() => {
      exitedFirst = true;
    });
    await expect
      .poll(() => exitedFirst || frames().some((frame) => frame.id === id), { timeout: 10_000 })
      .toBe(true);
    const answer = frames().find((frame) => frame.id === id);
    if (!answer) throw new Error(`the runner exited before answering ${text}; stderr: ${stderr}`);
    return answer;
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
