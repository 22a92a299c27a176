// A CLI that writes a line that is not JSON is killed and its turn fails. A prompt sent at once after that failure
// (before the killed program's exit is seen) must start a new program and run, not go to the dying one and then
// fail with that program's exit. The program is a stand-in for `claude -p`: garbage on its first run, then answers.
import { rmSync } from "node:fs";
import { afterEach, expect, it } from "vitest";
import { bareHarnessOptions, standInProgram } from "../../testing/cli.js";
import { ClaudeCodeFactory } from "../claude-code/factory.js";

const CLAUDE = `#!/usr/bin/env node
const fs = require("node:fs");
const first = !fs.existsSync(process.env.RAN);
fs.writeFileSync(process.env.RAN, "");
const print = (m) => process.stdout.write(JSON.stringify(m) + "\\n");
let buf = "";
process.stdin.on("data", (c) => {
  buf += c;
  for (let i; (i = buf.indexOf("\\n")) >= 0; buf = buf.slice(i + 1)) {
    if (first) { process.stdout.write("this is not json\\n"); continue; }
    const message = { id: "msg_1", role: "assistant", content: [{ type: "text", text: "done" }] };
    print({ type: "assistant", uuid: "u1", parent_tool_use_id: null, message });
    print({ type: "result", subtype: "success", is_error: false });
  }
});
process.stdin.on("end", () => process.exit(0));
setInterval(() => {}, 1000);
`;

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

it("runs a prompt sent right after a turn failed on a line that is not JSON, on a new program", async () => {
  const { dir, bin, native } = standInProgram("brain-garbage-then-prompt-", "claude", CLAUDE);
  dirs.push(dir);
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
