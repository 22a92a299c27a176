// A steer of a CLI family is held until the CLI's own turn ends, then sent as a follow-up. One that comes just
// as that turn ends (its user.steer still being written) has missed that moment: it must be refused, not
// answered as taken and dropped, nor held for the session's next turn.
import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { Brain } from "../../core/brain.js";
import { HarnessRegistry } from "../../core/registry.js";
import { FsSessionStore } from "../../store/fs/index.js";
import { tempDir } from "../../testing/brain.js";
import { holdWriteOf } from "../../testing/held-write.js";
import { BuiltinTools } from "../../tools/builtin.js";
import { ToolRouter } from "../../tools/router.js";
import { ClaudeCodeFactory } from "./factory.js";

/**
 * Writes each user line's text to `got`; the first line's turn ends only once the file `go` exists (having made
 * `waiting`), so the test says when the CLI's own turn ends.
 */
const fake = (dir: string) => `#!${process.execPath}
if (process.argv.includes("--version")) { console.log("2.1.0 (Claude Code)"); process.exit(0); }
const fs = require("node:fs");
const print = (m) => process.stdout.write(JSON.stringify(m) + "\\n");
const sid = "00000000-0000-4000-8000-000000000002";
const dir = ${JSON.stringify(dir)};
let buf = "";
let lines = 0;
const answer = () => {
  const message = { id: "msg_" + lines, role: "assistant", content: [{ type: "text", text: "done" }], stop_reason: "end_turn" };
  print({ type: "assistant", uuid: "u" + lines, session_id: sid, parent_tool_use_id: null, message });
  print({ type: "result", subtype: "success", is_error: false, session_id: sid });
};
process.stdin.on("data", (c) => {
  buf += c;
  let i;
  while ((i = buf.indexOf("\\n")) >= 0) {
    const line = JSON.parse(buf.slice(0, i));
    buf = buf.slice(i + 1);
    fs.appendFileSync(dir + "/got", JSON.stringify(line.message.content) + "\\n");
    print({ type: "system", subtype: "init", session_id: sid });
    if (++lines > 1) { answer(); continue; }
    fs.writeFileSync(dir + "/waiting", "");
    const poll = setInterval(() => {
      if (!fs.existsSync(dir + "/go")) return;
      clearInterval(poll);
      answer();
    }, 5);
  }
});
process.stdin.on("end", () => process.exit(0));
`;

const until = async (done: () => boolean | Promise<boolean>) => {
  while (!(await done())) await new Promise((resolve) => setTimeout(resolve, 5));
};

let brain: Brain | undefined;
afterEach(async () => {
  await brain?.close();
  brain = undefined;
});

it("refuses a steer that comes as the CLI's own turn ends, and never sends it in the next turn", async () => {
  const dir = tempDir("brain-steer-end-");
  const bin = join(dir, "claude");
  writeFileSync(bin, fake(dir));
  chmodSync(bin, 0o755);
  // The steer's user.steer waits to be written until the test lets it go: the CLI ends its turn in between.
  const { io, held, release } = holdWriteOf("user.steer");
  brain = new Brain({
    store: new FsSessionStore(join(dir, "home"), io),
    harnesses: new HarnessRegistry([new ClaudeCodeFactory({ bin })]),
    tools: new ToolRouter([new BuiltinTools()]),
    credentials: () => ({ base_url: "http://127.0.0.1:9", api_key: "sk-fake" }),
  });
  const session = await brain.create({ harness: "claude-code" });
  const turn = await session.prompt("first");
  await until(() => existsSync(join(dir, "waiting")));
  const steer = session.steer("late");
  steer.catch(() => {});
  await held;
  writeFileSync(join(dir, "go"), "");
  // The harness has ended the turn once a prompt is told the turn is settling (its turn.settled waits behind).
  const probe = () =>
    session.prompt("probe").then(
      () => "",
      (err: Error) => err.message,
    );
  await until(async () => /is settling/.test(await probe()));
  release();
  await expect(steer).rejects.toThrow(/nothing to steer: the turn ended before the steer reached it/);
  expect((await turn.settled).status).toBe("completed");
  expect((await (await session.prompt("next")).settled).status).toBe("completed");
  const got = readFileSync(join(dir, "got"), "utf8")
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line));
  expect(JSON.stringify(got)).not.toContain("late");
  expect(got).toHaveLength(2);
});
