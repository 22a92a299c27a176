// A CLI agent that streams faster than the session's log makes its events durable (the log's fsync held by the
// test): Brain stops reading the CLI's stdout while the log is behind by more than BACKLOG_BYTES, so what it
// holds stays bounded and the CLI blocks on its full pipe; once the disk comes back, every delta arrives in order.
// The CLI is a stand-in for `claude -p` writing its real stream-json (text deltas as `stream_event`s): every CLI
// family reads its stdout through the one CliProcess this gates.
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect } from "vitest";
import { testIO } from "../../store/fs/testing/fault-io.js";
import { FLOOD_EVENTS, FLOOD_PAD, floodGateTests, progressIn, withoutGate } from "../../testing/backlog.js";
import { makeBrain, type TestBrain } from "../../testing/brain.js";
import { useStandIns } from "../../testing/cli.js";
import { ClaudeCodeFactory } from "../claude-code/factory.js";

/**
 * `claude -p` in stream-json: on the prompt "flood", once told to go (a file `go` beside `ready`, both in $DIR),
 * writes FLOOD_EVENTS text deltas as fast as its stdout takes them, noting in `progress` how many it has
 * written, then ends the turn; any other prompt it answers at once.
 */
const CLAUDE = `#!${process.execPath}
if (process.argv.includes("--version")) { console.log("2.1.0 (Claude Code)"); process.exit(0); }
const fs = require("node:fs");
const dir = process.env.DIR;
const sid = "00000000-0000-4000-8000-000000000003";
const print = (m) => process.stdout.write(JSON.stringify(m) + "\\n");
const stream = (event) => print({ type: "stream_event", event, session_id: sid, parent_tool_use_id: null, uuid: "s" });
const assistant = (n, text) => {
  const message = { id: "msg_" + n, role: "assistant", content: [{ type: "text", text }], stop_reason: "end_turn" };
  print({ type: "assistant", uuid: "u" + n, session_id: sid, parent_tool_use_id: null, message });
};
const result = () => print({ type: "result", subtype: "success", is_error: false, session_id: sid });
async function flood(n) {
  fs.writeFileSync(dir + "/ready", "");
  while (!fs.existsSync(dir + "/go")) await new Promise((r) => setTimeout(r, 5));
  stream({ type: "message_start", message: { id: "msg_" + n, usage: {} } });
  stream({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } });
  for (let i = 0; i < ${FLOOD_EVENTS}; i++) {
    const delta = { type: "text_delta", text: String(i).padStart(6, "0") + "x".repeat(${FLOOD_PAD}) };
    const more = stream({ type: "content_block_delta", index: 0, delta });
    if (i % 16 === 15) fs.writeFileSync(dir + "/progress", String(i + 1));
    if (!more) await new Promise((r) => process.stdout.once("drain", r));
  }
  fs.writeFileSync(dir + "/progress", "${FLOOD_EVENTS}");
  stream({ type: "content_block_stop", index: 0 });
  // As the real CLI does: the whole message after its last block, before message_stop (its text was streamed).
  assistant(n, "the streamed text");
  stream({ type: "message_stop" });
  result();
}
let [buf, n] = ["", 0];
process.stdin.on("data", (c) => {
  buf += c;
  for (let i; (i = buf.indexOf("\\n")) >= 0; buf = buf.slice(i + 1)) {
    const line = JSON.parse(buf.slice(0, i));
    print({ type: "system", subtype: "init", session_id: sid });
    const content = line.message.content;
    const text = typeof content === "string" ? content : content.map((c) => c.text ?? "").join("");
    if (text === "flood") flood(++n);
    else {
      assistant(++n, "echo: " + text);
      result();
    }
  }
});
process.stdin.on("end", () => process.exit(0));
`;

const standIns = useStandIns();
let t: TestBrain;
afterEach(async () => {
  await t?.cleanup();
});

/** Starts the flood with the log's next fsync held; returns the fsync's release and how far the CLI got. */
async function floodHeld(gated: boolean) {
  const { dir, bin } = standIns.make("brain-cli-flood-", "claude", CLAUDE);
  const factory = new ClaudeCodeFactory({ bin, env: { DIR: dir } });
  const io = testIO();
  t = makeBrain({
    factories: [gated ? factory : withoutGate(factory)],
    provider: { base_url: "http://127.0.0.1:9", api_key: "sk-fake" },
    io,
  });
  const session = await t.brain.create({ harness: "claude-code" });
  const turn = await session.prompt("flood");
  // The fsync is held before the first delta: none of the flood is durable, however busy the machine.
  await expect.poll(() => existsSync(join(dir, "ready")), { timeout: 30_000 }).toBe(true);
  const release = io.holdDurable();
  writeFileSync(join(dir, "go"), "");
  const progress = () => progressIn(dir);
  return { session, turn, release, progress };
}

describe("a CLI agent flooding a session whose disk has fallen behind", () => {
  floodGateTests(floodHeld, { writer: "the CLI", waitsOn: "its pipe" });
});
