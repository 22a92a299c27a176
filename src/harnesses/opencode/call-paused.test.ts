// A call to opencode while the read gate holds its `/event` stream (the session's log behind: its fsync held by
// the test). A handler may answer only once the events it published are written to that stream, and those wait on
// TCP while Brain does not read: the call's deadline measures the server's silence, which is then Brain's. Here
// the call is a follow-up's prompt, sent as the first prompt's turn ends, whose failure would fail the turn.
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { blocked, FLOOD_EVENTS, FLOOD_PAD, progressIn } from "../../testing/backlog.js";
import { events } from "../../testing/brain.js";
import { SERVE_HEAD, SERVE_TAIL, useHeldOpencode } from "./testing/stand-in.js";

/** How long a call may go unanswered (opencode's start timeout): to run out several times over while held. */
const ANSWER_MS = 5000;

/**
 * `opencode serve`: the first prompt waits for a file `go` in $DIR (noting `ready`), then ends its turn; the second
 * writes FLOOD_EVENTS text deltas on its event stream as fast as its socket takes them, noting in `progress` how
 * many it wrote; it answers its POST only once its socket takes them again after the test said Brain stopped
 * reading (a file `held`): a handler whose publish waits on the stream's write. Then it ends the turn.
 */
const SERVE = `${SERVE_HEAD}
let n = 0;
async function first(res) {
  res.writeHead(204).end();
  message("msg_" + ++n);
  fs.writeFileSync(dir + "/ready", "");
  while (!fs.existsSync(dir + "/go")) await new Promise((r) => setTimeout(r, 5));
  send("session.idle", { sessionID: "ses_1" });
}
async function flood(res) {
  const id = "msg_" + ++n;
  message(id);
  for (let i = 0; i < ${FLOOD_EVENTS}; i++) {
    const more = delta(id, String(i).padStart(6, "0") + "x".repeat(${FLOOD_PAD}));
    if (i % 16 === 15) fs.writeFileSync(dir + "/progress", String(i + 1));
    if (more) continue;
    await new Promise((r) => events.once("drain", r));
    if (!res.headersSent && fs.existsSync(dir + "/held")) res.writeHead(204).end();
  }
  fs.writeFileSync(dir + "/progress", "${FLOOD_EVENTS}");
  if (!res.headersSent) res.writeHead(204).end();
  send("session.idle", { sessionID: "ses_1" });
}
function prompt(req, res) {
  return n === 0 ? first(res) : flood(res);
}
${SERVE_TAIL}`;

const heldOpencode = useHeldOpencode();

describe("a call to opencode while the read gate holds its event stream", () => {
  it("waits for an answer that waits on the unread stream: the follow-up runs and the turn completes", async () => {
    const { dir, io, session } = await heldOpencode("brain-opencode-call-", SERVE, {
      timeouts: { startMs: ANSWER_MS },
    });
    const turn = await session.prompt("wait");
    await expect.poll(() => existsSync(join(dir, "ready")), { timeout: 60_000 }).toBe(true);
    await session.steer("flood");
    const release = io.holdDurable();
    try {
      writeFileSync(join(dir, "go"), "");
      await blocked(session, () => progressIn(dir));
      writeFileSync(join(dir, "held"), "");
      // The call's deadline runs out twice over while the log is held (the follow-up failed at the first).
      await new Promise((resolve) => setTimeout(resolve, 2 * ANSWER_MS));
    } finally {
      release();
    }
    await turn.settled;
    // The turn's end as logged, with its error, if any (the follow-up's call given up on: "no answer within").
    const all = await events(session);
    const settled = all.filter((e) => e.type === "turn.settled").map((e) => e.data);
    const warnings = all.filter((e) => e.type === "harness.warning").map((e) => e.data);
    expect({ settled, warnings }).toEqual({ settled: [{ status: "completed" }], warnings: [] });
    expect(progressIn(dir)).toBe(FLOOD_EVENTS);
  }, 180_000);
});
