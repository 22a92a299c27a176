// An interrupt while the read gate holds a CLI agent's stdout (the session's log behind: its fsync held by the
// test). The CLI stops at once and ends its turn, but what it wrote waits in the pipe Brain is not reading: the
// interrupt's grace measures the CLI's silence, and while Brain does not listen the silence is Brain's. A SIGKILL
// then would blame the CLI for a turn it ended (and may tear the transcript it was writing).
import { afterEach, describe, it } from "vitest";
import { testIO } from "../../store/fs/testing/fault-io.js";
import { FLOOD_EVENTS, FLOOD_PAD } from "../../testing/backlog.js";
import { makeBrain, type TestBrain } from "../../testing/brain.js";
import { useStandIns } from "../../testing/cli.js";
import { expectInterruptOutlivesHeldLog } from "../../testing/interrupt-held.js";
import { ClaudeCodeFactory } from "../claude-code/factory.js";

/** The interrupt's grace: short enough to run out many times over while the test holds the log. */
const GRACE_MS = 400;

/**
 * `claude -p` in stream-json (as in backpressure.test.ts): on "flood", once told to go, writes text deltas as fast
 * as its stdout takes them until an interrupt (a control_request, noted in `interrupted`) comes, notes in
 * `progress` how many it wrote, then ends the turn. Its pid is in `pid`.
 */
const CLAUDE = `#!${process.execPath}
if (process.argv.includes("--version")) { console.log("2.1.0 (Claude Code)"); process.exit(0); }
const fs = require("node:fs");
const dir = process.env.DIR;
fs.writeFileSync(dir + "/pid", String(process.pid));
const sid = "00000000-0000-4000-8000-000000000004";
const print = (m) => process.stdout.write(JSON.stringify(m) + "\\n");
const stream = (event) => print({ type: "stream_event", event, session_id: sid, parent_tool_use_id: null, uuid: "s" });
let stopped = false;
async function flood() {
  fs.writeFileSync(dir + "/ready", "");
  while (!fs.existsSync(dir + "/go")) await new Promise((r) => setTimeout(r, 5));
  stream({ type: "message_start", message: { id: "msg_1", usage: {} } });
  stream({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } });
  let i = 0;
  for (; i < ${FLOOD_EVENTS} && !stopped; i++) {
    const delta = { type: "text_delta", text: String(i).padStart(6, "0") + "x".repeat(${FLOOD_PAD}) };
    const more = stream({ type: "content_block_delta", index: 0, delta });
    if (i % 16 === 15) fs.writeFileSync(dir + "/progress", String(i + 1));
    if (!more) await new Promise((r) => process.stdout.once("drain", r));
  }
  fs.writeFileSync(dir + "/progress", String(i));
  stream({ type: "content_block_stop", index: 0 });
  stream({ type: "message_stop" });
  print({ type: "result", subtype: "error_during_execution", is_error: false, session_id: sid });
}
let buf = "";
process.stdin.on("data", (c) => {
  buf += c;
  for (let i; (i = buf.indexOf("\\n")) >= 0; buf = buf.slice(i + 1)) {
    const line = JSON.parse(buf.slice(0, i));
    if (line.type === "control_request") {
      stopped = true;
      fs.writeFileSync(dir + "/interrupted", "");
      print({ type: "control_response", response: { subtype: "success", request_id: line.request_id } });
      continue;
    }
    print({ type: "system", subtype: "init", session_id: sid });
    flood();
  }
});
process.stdin.on("end", () => process.exit(0));
`;

const standIns = useStandIns();
let t: TestBrain;
afterEach(async () => {
  await t?.cleanup();
});

describe("an interrupt while the read gate holds a CLI's stdout", () => {
  it("does not kill a CLI whose end of turn waits unread: the turn ends as the CLI says, with all it wrote", async () => {
    const { dir, bin } = standIns.make("brain-cli-interrupt-", "claude", CLAUDE);
    const factory = new ClaudeCodeFactory({
      bin,
      env: { DIR: dir },
      timeouts: { interruptGraceMs: GRACE_MS },
    });
    const io = testIO();
    t = makeBrain({
      factories: [factory],
      provider: { base_url: "http://127.0.0.1:9", api_key: "sk-fake" },
      io,
    });
    const session = await t.brain.create({ harness: "claude-code" });
    await expectInterruptOutlivesHeldLog(session, { io, dir: dir, graceMs: GRACE_MS });
  }, 180_000);
});
