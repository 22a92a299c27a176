// An interrupt while the read gate holds opencode's `/event` stream (the session's log behind: its fsync held by
// the test). The server stops at once and ends its turn, but its events wait in the socket Brain is not reading:
// the interrupt's grace measures the server's silence on that stream, not on its stdout, and while Brain does not
// listen the silence is Brain's. A SIGKILL then would blame opencode for a turn it ended.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { testIO } from "../../store/fs/testing/fault-io.js";
import { blocked, FLOOD_EVENTS, FLOOD_PAD, progressIn } from "../../testing/backlog.js";
import { events, makeBrain, type TestBrain } from "../../testing/brain.js";
import { useStandIns } from "../../testing/cli.js";
import { expectInterruptOutlivesHeldLog } from "../../testing/interrupt-held.js";
import { alive } from "../../testing/processes.js";
import { OpencodeFactory } from "./factory.js";

/**
 * The interrupt's grace: short enough to run out many times over while the test holds the log, and long enough
 * to read what waits once it is released (a socket holds megabytes where a CLI's pipe holds 64 KiB): only a
 * grace counted while the stream is read, never a second of it, outlives the hold.
 */
const GRACE_MS = 2000;

/**
 * `opencode serve` (as in backpressure.test.ts): at the prompt "flood", once told to go, text deltas on the event
 * stream as fast as its socket takes them until an abort (noted in `interrupted`) comes, noting in `progress` how
 * many it wrote, then the abort's error and the session's idle (with $SILENT set, nothing: a server that does not
 * end the turn). Its pid is in `pid`.
 */
const SERVE = `#!${process.execPath}
if (process.argv.includes("--version")) { console.log("1.0.0"); process.exit(0); }
const { createServer } = require("node:http");
const fs = require("node:fs");
const dir = process.env.DIR;
fs.writeFileSync(dir + "/pid", String(process.pid));
const port = Number(process.argv[process.argv.indexOf("--port") + 1]);
let [events, n, stopped] = [undefined, 0, false];
const send = (type, properties) => events.write("data: " + JSON.stringify({ type, properties }) + "\\n\\n");
const delta = (id, delta) =>
  send("message.part.delta", { sessionID: "ses_1", messageID: id, partID: "prt_" + id, field: "text", delta });
async function flood() {
  const id = "msg_" + ++n;
  send("message.updated", { info: { id, sessionID: "ses_1", role: "assistant" } });
  fs.writeFileSync(dir + "/ready", "");
  while (!fs.existsSync(dir + "/go")) await new Promise((r) => setTimeout(r, 5));
  let i = 0;
  for (; i < ${FLOOD_EVENTS} && !stopped; i++) {
    const more = delta(id, String(i).padStart(6, "0") + "x".repeat(${FLOOD_PAD}));
    if (i % 16 === 15) fs.writeFileSync(dir + "/progress", String(i + 1));
    if (!more) await new Promise((r) => events.once("drain", r));
  }
  fs.writeFileSync(dir + "/progress", String(i));
  if (process.env.SILENT) return;
  send("session.error", { sessionID: "ses_1", error: { name: "MessageAbortedError", data: { message: "Aborted" } } });
  send("session.idle", { sessionID: "ses_1" });
}
createServer((req, res) => {
  if (req.url === "/event") {
    res.writeHead(200, { "content-type": "text/event-stream" });
    events = res;
    return send("server.connected", {});
  }
  let body = "";
  req.on("data", (d) => (body += d));
  req.on("end", () => {
    if (req.url.endsWith("/abort")) {
      stopped = true;
      fs.writeFileSync(dir + "/interrupted", "");
      return res.end("true");
    }
    if (!req.url.endsWith("/prompt_async"))
      return res.end(req.method === "POST" && req.url === "/session" ? '{"id":"ses_1"}' : "{}");
    res.writeHead(204).end();
    flood();
  });
}).listen(port, "127.0.0.1", function () {
  console.log("opencode server listening on http://127.0.0.1:" + this.address().port);
});
`;

const standIns = useStandIns();
let t: TestBrain;
afterEach(async () => {
  await t?.cleanup();
});

/** A session on the stand-in server, its log's fsync under the test's control. */
async function opencodeSession(env: Record<string, string> = {}) {
  const { dir, bin } = standIns.make("brain-opencode-interrupt-", "opencode", SERVE);
  const factory = new OpencodeFactory({
    bin,
    env: { DIR: dir, ...env },
    timeouts: { interruptGraceMs: GRACE_MS },
  });
  const io = testIO();
  t = makeBrain({
    factories: [factory],
    provider: { base_url: "http://127.0.0.1:9", api_key: "sk-fake" },
    io,
  });
  const session = await t.brain.create({ harness: "opencode", config: { model: "m1" } });
  return { dir, io, session };
}

describe("an interrupt while the read gate holds opencode's event stream", () => {
  it("does not kill a server whose end of turn waits unread: the turn ends as opencode says, with all it wrote", async () => {
    const { dir, io, session } = await opencodeSession();
    await expectInterruptOutlivesHeldLog(session, { io, dir, graceMs: GRACE_MS });
  }, 180_000);

  it("kills a server that stays silent once its stream is read again, and says so", async () => {
    const { dir, io, session } = await opencodeSession({ SILENT: "1" });
    const turn = await session.prompt("flood");
    await expect.poll(() => existsSync(join(dir, "ready")), { timeout: 30_000 }).toBe(true);
    const release = io.holdDurable();
    let pid = 0;
    let interrupting: Promise<void> | undefined;
    try {
      writeFileSync(join(dir, "go"), "");
      await blocked(session, () => progressIn(dir));
      pid = Number(readFileSync(join(dir, "pid"), "utf8"));
      interrupting = session.interrupt();
      await expect.poll(() => existsSync(join(dir, "interrupted")), { timeout: 30_000 }).toBe(true);
      await new Promise((resolve) => setTimeout(resolve, 3 * GRACE_MS));
      expect(alive(pid)).toBe(true);
    } finally {
      release();
    }
    await expect.poll(() => alive(pid), { timeout: 60_000 }).toBe(false);
    await interrupting;
    expect((await turn.settled).status).toBe("interrupted");
    const warnings = (await events(session)).filter((e) => e.type === "harness.warning").map((e) => e.data);
    expect(warnings).toEqual([
      { message: `opencode: the CLI did not end the interrupted turn within ${GRACE_MS} ms; killed it` },
    ]);
  }, 180_000);
});
