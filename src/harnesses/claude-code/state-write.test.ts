// Claude Code reports its session id as each process starts; Brain records a new one in its state file. That
// write can fail (a full disk): the session must hear of it, not lose the daemon to an unhandled rejection.
import { afterEach, expect, it } from "vitest";
import { events, type TestBrain } from "../../testing/brain.js";
import { STATE_FILE } from "./harness.js";
import { fakeClaudeBrain } from "./testing/fake-claude.js";

/**
 * Answers each user line at once, under a session id of its own choosing (as a CLI that forked one), having first
 * put a directory where Brain's state file is written through a temporary name: the write fails as on a full disk.
 */
const FAKE = `#!${process.execPath}
if (process.argv.includes("--version")) { console.log("2.1.0 (Claude Code)"); process.exit(0); }
const print = (m) => process.stdout.write(JSON.stringify(m) + "\\n");
const sid = "00000000-0000-4000-8000-000000000001";
const native = require("node:path").dirname(process.env.CLAUDE_CONFIG_DIR);
require("node:fs").mkdirSync(native + "/${STATE_FILE}.tmp/inside", { recursive: true });
let buf = "";
process.stdin.on("data", (c) => {
  buf += c;
  let i;
  while ((i = buf.indexOf("\\n")) >= 0) {
    buf = buf.slice(i + 1);
    print({ type: "system", subtype: "init", session_id: sid });
    const message = { id: "msg_1", role: "assistant", content: [{ type: "text", text: "done" }], stop_reason: "end_turn" };
    print({ type: "assistant", uuid: "u1", session_id: sid, parent_tool_use_id: null, message });
    print({ type: "result", subtype: "success", is_error: false, session_id: sid });
  }
});
process.stdin.on("end", () => process.exit(0));
`;

let t: TestBrain | undefined;
afterEach(async () => {
  await t?.cleanup();
  t = undefined;
});

it("a state file it cannot write is a warning on the session, and the turn completes", async () => {
  t = fakeClaudeBrain(FAKE);
  const session = await t.brain.create({ harness: "claude-code" });
  const settled = await (await session.prompt("hello")).settled;
  expect(settled.status).toBe("completed");
  const warnings = (await events(session)).filter((e) => e.type === "harness.warning");
  expect(JSON.stringify(warnings)).toMatch(/could not record Claude Code's session id/);
});
