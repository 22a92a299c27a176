// Claude Code appends a turn's last message to its transcript after printing the turn's `result`. A checkpoint
// taken as soon as the turn settles must still hold that message: here a fake `claude` that writes it late.
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { events, type TestBrain } from "../../testing/brain.js";
import { fakeClaudeBrain } from "./testing/fake-claude.js";

/** Speaks just enough stream-json; the last message's transcript record lands LATE_MS after the `result`. */
const FAKE = `#!${process.execPath}
const fs = require("node:fs");
const path = require("node:path");
const crypto = require("node:crypto");
const LATE_MS = 1500;
if (process.argv.includes("--version")) { console.log("2.1.0 (Claude Code)"); process.exit(0); }
const argv = process.argv;
const sid = argv[argv.indexOf(argv.includes("--resume") ? "--resume" : "--session-id") + 1];
const dir = path.join(process.env.CLAUDE_CONFIG_DIR, "projects", fs.realpathSync(process.cwd()).replace(/[^A-Za-z0-9]/g, "-"));
fs.mkdirSync(dir, { recursive: true });
const transcript = path.join(dir, sid + ".jsonl");
const record = (r) => fs.appendFileSync(transcript, JSON.stringify({ ...r, sessionId: sid }) + "\\n");
const print = (m) => process.stdout.write(JSON.stringify(m) + "\\n");
let buf = "";
process.stdin.on("data", (c) => {
  buf += c;
  let i;
  while ((i = buf.indexOf("\\n")) >= 0) { const line = JSON.parse(buf.slice(0, i)); buf = buf.slice(i + 1); if (line.type === "user") turn(line); }
});
process.stdin.on("end", () => setTimeout(() => process.exit(0), LATE_MS + 100));
function turn(user) {
  print({ type: "system", subtype: "init", session_id: sid, uuid: crypto.randomUUID() });
  record({ type: "user", uuid: crypto.randomUUID(), message: user.message });
  const uuid = crypto.randomUUID();
  const message = { id: "msg_" + uuid, role: "assistant", content: [{ type: "text", text: "done" }], stop_reason: "end_turn", usage: { input_tokens: 1, output_tokens: 1 } };
  print({ type: "assistant", uuid, session_id: sid, parent_tool_use_id: null, message });
  print({ type: "result", subtype: "success", is_error: false, total_cost_usd: 0, uuid: crypto.randomUUID(), session_id: sid });
  setTimeout(() => record({ type: "assistant", uuid, message }), LATE_MS);
}
`;

let t: TestBrain | undefined;
afterEach(async () => {
  await t?.cleanup();
  t = undefined;
});

it("a checkpoint right after a turn settles holds the turn's last message, written late", async () => {
  t = fakeClaudeBrain(FAKE);
  const session = await t.brain.create({ harness: "claude-code" });
  expect((await (await session.prompt("hello")).settled).status).toBe("completed");
  const manifest = await session.checkpoint();

  const listed = manifest.files.find((f) => f.path.endsWith(".jsonl"));
  expect(listed).toBeDefined();
  // Once the fake's late write has landed, the checkpoint must have taken the transcript as it ends up.
  const file = join(t.store.paths(session.id).native, listed!.path);
  while (readFileSync(file, "utf8").trim().split("\n").length < 2)
    await new Promise((resolve) => setTimeout(resolve, 20));
  expect(listed!.size).toBe(statSync(file).size);
  expect((await events(session)).filter((e) => e.type === "harness.warning")).toEqual([]);
});
