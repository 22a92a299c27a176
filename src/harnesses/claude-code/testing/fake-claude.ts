// A Brain whose claude-code harness runs a script of the test's in place of the real CLI: for what the real one
// cannot be made to do on cue (write its transcript late, fork its session id).
import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { makeBrain, type TestBrain, tempDir } from "../../../testing/brain.js";
import { ClaudeCodeFactory } from "../factory.js";

/** `script`: a whole node program (its `#!` line included) that speaks stream-json as `claude -p` does. */
export function fakeClaudeBrain(script: string): TestBrain {
  const bin = join(tempDir("brain-fake-claude-"), "claude");
  writeFileSync(bin, script);
  chmodSync(bin, 0o755);
  return makeBrain({
    factories: [new ClaudeCodeFactory({ bin })],
    provider: { base_url: "http://127.0.0.1:9", api_key: "sk-fake" },
  });
}

/**
 * A `claude -p` stand-in for fakeClaudeBrain that answers each user line at once ("done") under session id `sid`
 * (a JS expression). `setup` runs first (fs and path are in scope), `perLine` before each answer.
 */
export function answeringClaude(sid: string, setup = "", perLine = ""): string {
  return `#!${process.execPath}
if (process.argv.includes("--version")) { console.log("2.1.0 (Claude Code)"); process.exit(0); }
const fs = require("node:fs");
const path = require("node:path");
const print = (m) => process.stdout.write(JSON.stringify(m) + "\\n");
const sid = ${sid};
${setup}
let buf = "";
process.stdin.on("data", (c) => {
  buf += c;
  let i;
  while ((i = buf.indexOf("\\n")) >= 0) {
    buf = buf.slice(i + 1);
    ${perLine}
    print({ type: "system", subtype: "init", session_id: sid });
    const message = { id: "msg_1", role: "assistant", content: [{ type: "text", text: "done" }], stop_reason: "end_turn" };
    print({ type: "assistant", uuid: "u1", session_id: sid, parent_tool_use_id: null, message });
    print({ type: "result", subtype: "success", is_error: false, session_id: sid });
  }
});
process.stdin.on("end", () => process.exit(0));
`;
}
