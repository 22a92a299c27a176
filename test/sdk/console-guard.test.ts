// A runner's stdout is for frames only: what a library prints through the console, by any of its methods that
// write to stdout, or through process.stdout.write (without its newline it ran into the next frame, which Brain then
// refused), goes to stderr instead, in a real runner process on the built SDK.
import { spawn } from "node:child_process";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { decodeRunnerFrame } from "../../src/protocol/frames.js";
import { encodeLine } from "../../src/protocol/ndjson.js";
import { tempDir } from "../../src/testing/brain.js";
import { root } from "../../src/testing/nui.js";
import { OPEN_PARAMS } from "./harness.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

it("keeps console.dir, dirxml, table, count and process.stdout.write off stdout: every line there is a frame", async () => {
  const dir = tempDir("brain-console-guard-");
  dirs.push(dir);
  const runner = join(dir, "runner.mjs");
  const sdk = join(root, "dist/sdk/ts/index.js");
  writeFileSync(
    runner,
    `import { serve } from ${JSON.stringify(sdk)};
serve({ open: () => ({ async prompt(text, turn) {
  console.dir({ dir: 1 }); console.dirxml({ dirxml: 2 }); console.table([{ table: 3 }]); console.count("n");
  process.stdout.write("progress 50%");
  await turn.delta("after");
}, checkpoint: () => [] }) });`,
  );
  const child = spawn(process.execPath, [runner], { stdio: ["pipe", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk;
  });
  const answered = new Promise<void>((resolve) => {
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk;
      if (stdout.includes('"id":"p1"')) resolve();
    });
  });
  child.stdin.write(encodeLine({ attachment: "A", id: "o1", method: "open", params: OPEN_PARAMS }));
  child.stdin.write(
    encodeLine({ attachment: "A", turn: "T1", id: "p1", method: "prompt", params: { text: "go" } }),
  );
  await answered;
  child.stdin.end();
  // "close", not "exit": stderr is read to its end.
  await new Promise((resolve) => child.on("close", resolve));
  const lines = stdout.split("\n").filter(Boolean);
  // Every line decodes; the open's reply and the turn's delta may come in either order.
  const frames = lines.map((line) => decodeRunnerFrame(line));
  expect(frames).toHaveLength(3);
  expect(frames).toEqual(
    expect.arrayContaining([
      expect.objectContaining({ id: "o1", result: {} }),
      expect.objectContaining({ turn: "T1", event: "assistant.delta", data: { text: "after" } }),
      expect.objectContaining({ id: "p1", turn: "T1", result: {} }),
    ]),
  );
  for (const printed of ["dir: 1", "dirxml: 2", "table", "n: 1", "progress 50%"])
    expect(stderr).toContain(printed);
});
