// An interrupt while the read gate holds opencode's `/event` stream (the session's log behind: its fsync held by
// the test). The server stops at once and ends its turn, but its events wait in the socket Brain is not reading:
// the interrupt's grace measures the server's silence on that stream, not on its stdout, and while Brain does not
// listen the silence is Brain's. A SIGKILL then would blame opencode for a turn it ended.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { blocked, FLOOD_EVENTS, FLOOD_PAD, progressIn } from "../../testing/backlog.js";
import { events } from "../../testing/brain.js";
import { expectInterruptOutlivesHeldLog } from "../../testing/interrupt-held.js";
import { alive } from "../../testing/processes.js";
import { SERVE_HEAD, SERVE_TAIL, useHeldOpencode } from "./testing/stand-in.js";

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
const SERVE = `${SERVE_HEAD}
fs.writeFileSync(dir + "/pid", String(process.pid));
let [n, stopped] = [0, false];
async function flood() {
  const id = "msg_" + ++n;
  message(id);
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
function prompt(req, res) {
  res.writeHead(204).end();
  flood();
}
function abort(res) {
  stopped = true;
  fs.writeFileSync(dir + "/interrupted", "");
  res.end("true");
}
${SERVE_TAIL}`;

const heldOpencode = useHeldOpencode();

/** A session on the stand-in server, its log's fsync under the test's control. */
const opencodeSession = (env: Record<string, string> = {}) =>
  heldOpencode("brain-opencode-interrupt-", SERVE, { env, timeouts: { interruptGraceMs: GRACE_MS } });

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
