// A Codex start that fails (here thread/start is refused) kills the program and fails the turn. A prompt sent at
// once after that failure (before the killed program's exit is seen) must run on a new program, not fail with the
// old one's exit. The program is a stand-in for `codex app-server`: it refuses thread/start on its first run.
import { expect, it } from "vitest";
import { bareHarnessOptions, ndjsonProgram, useStandIns } from "../../testing/cli.js";
import { CodexFactory } from "./factory.js";

const APP_SERVER = ndjsonProgram(
  `    if (m.id === undefined) continue;
    if (m.method === "thread/start" && first) send({ id: m.id, error: { code: -32000, message: "not today" } });
    else if (m.method === "thread/start") send({ id: m.id, result: { thread: { id: "thread-1" } } });
    else if (m.method === "turn/start") {
      send({ id: m.id, result: { turn: { id: "turn-1" } } });
      send({ method: "turn/completed", params: { threadId: "thread-1", turn: { id: "turn-1", status: "completed" } } });
    } else send({ id: m.id, result: {} });`,
  `const fs = require("node:fs");
const first = !fs.existsSync(process.env.RAN);
fs.writeFileSync(process.env.RAN, "");`,
);

const standIns = useStandIns();

it("runs a prompt sent right after a failed start on a new program", async () => {
  const { dir, bin, native } = standIns.make("brain-codex-failed-start-", "codex", APP_SERVER);
  const harness = await new CodexFactory({ bin, env: { RAN: `${dir}/ran` } }).open(
    bareHarnessOptions(native),
  );
  try {
    const signal = new AbortController().signal;
    await expect(harness.prompt("one", { turn: "t1", signal })).rejects.toThrow(/not today/);
    expect(await harness.prompt("two", { turn: "t2", signal })).toEqual({ interrupted: false });
  } finally {
    await harness.close();
  }
});
