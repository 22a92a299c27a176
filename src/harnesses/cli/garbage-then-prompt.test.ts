// A CLI that writes a line that is not JSON is killed and its turn fails. A prompt sent at once after that failure
// (before the killed program's exit is seen) must start a new program and run, not go to the dying one and then
// fail with that program's exit. The program is a stand-in for `claude -p`: garbage on its first run, then answers.
import { expect, it } from "vitest";
import { bareHarnessOptions, ndjsonProgram, useStandIns } from "../../testing/cli.js";
import { ClaudeCodeFactory } from "../claude-code/factory.js";

const CLAUDE = ndjsonProgram(
  `    if (first) { process.stdout.write("this is not json\\n"); continue; }
    const message = { id: "msg_1", role: "assistant", content: [{ type: "text", text: "done" }] };
    send({ type: "assistant", uuid: "u1", parent_tool_use_id: null, message });
    send({ type: "result", subtype: "success", is_error: false });`,
  `const fs = require("node:fs");
const first = !fs.existsSync(process.env.RAN);
fs.writeFileSync(process.env.RAN, "");`,
);

const standIns = useStandIns();

it("runs a prompt sent right after a turn failed on a line that is not JSON, on a new program", async () => {
  const { dir, bin, native } = standIns.make("brain-garbage-then-prompt-", "claude", CLAUDE);
  const harness = await new ClaudeCodeFactory({ bin, env: { RAN: `${dir}/ran` } }).open(
    bareHarnessOptions(native),
  );
  try {
    const signal = new AbortController().signal;
    await expect(harness.prompt("one", { turn: "t1", signal })).rejects.toThrow(/not JSON/);
    expect(await harness.prompt("two", { turn: "t2", signal })).toEqual({ interrupted: false });
  } finally {
    await harness.close();
  }
});
