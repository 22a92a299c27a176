// opencode streaming faster than the session's log makes its events durable (the log's fsync held by the test):
// Brain stops reading the server's `/event` stream while the log is behind by more than BACKLOG_BYTES, so what
// it holds stays bounded and the server's writes wait on TCP; once the disk comes back, every delta arrives in
// order. The server is a stand-in for `opencode serve` writing its real events (`message.part.delta`).
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  blocked,
  FLOOD_EVENTS,
  FLOOD_PAD,
  floodGateTests,
  floodText,
  progressIn,
  waiting,
  withoutGate,
} from "../../testing/backlog.js";
import { events } from "../../testing/brain.js";
import { SERVE_HEAD, SERVE_TAIL, useHeldOpencode } from "./testing/stand-in.js";

/**
 * Health, the event stream and a new session; at the prompt "flood", once told to go (a file `go` beside
 * `ready`, both in $DIR), FLOOD_EVENTS text deltas on the event stream as fast as its socket takes them, noting
 * in `progress` how many it has written, then the session's idle; any other prompt it answers at once. Told to
 * exit (a file `exit`) during the flood, it notes in `flushed` how many deltas its socket has taken, and exits.
 */
const SERVE = `${SERVE_HEAD}
let n = 0;
const idle = () => send("session.idle", { sessionID: "ses_1" });
async function answer(text) {
  const id = "msg_" + ++n;
  message(id);
  if (text !== "flood") return delta(id, "echo: " + text), idle();
  fs.writeFileSync(dir + "/ready", "");
  while (!fs.existsSync(dir + "/go")) await new Promise((r) => setTimeout(r, 5));
  let flushed = 0;
  setInterval(() => {
    if (!fs.existsSync(dir + "/exit")) return;
    fs.writeFileSync(dir + "/flushed", String(flushed));
    process.exit(3);
  }, 5);
  for (let i = 0; i < ${FLOOD_EVENTS}; i++) {
    const more = delta(id, String(i).padStart(6, "0") + "x".repeat(${FLOOD_PAD}), () => (flushed = i + 1));
    if (i % 16 === 15) fs.writeFileSync(dir + "/progress", String(i + 1));
    if (!more) await new Promise((r) => events.once("drain", r));
  }
  fs.writeFileSync(dir + "/progress", "${FLOOD_EVENTS}");
  idle();
}
function prompt(req, res, body) {
  res.writeHead(204).end();
  const parts = JSON.parse(body).parts ?? [];
  answer(parts.map((p) => p.text ?? "").join(""));
}
${SERVE_TAIL}`;

const heldOpencode = useHeldOpencode();

/** Starts the flood with the log's next fsync held; returns the fsync's release and how far the server got. */
async function floodHeld(gated: boolean) {
  const { dir, io, session } = await heldOpencode(
    "brain-opencode-flood-",
    SERVE,
    {},
    gated ? undefined : withoutGate,
  );
  const turn = await session.prompt("flood");
  // The fsync is held before the first delta: none of the flood is durable, however busy the machine.
  await expect.poll(() => existsSync(join(dir, "ready")), { timeout: 60_000 }).toBe(true);
  const release = io.holdDurable();
  writeFileSync(join(dir, "go"), "");
  return { dir, session, turn, release, progress: () => progressIn(dir) };
}

describe("opencode flooding a session whose disk has fallen behind", () => {
  // What the HTTP client had read ahead when the reader stopped: a few of its chunks past the bound.
  floodGateTests(floodHeld, { writer: "the server", waitsOn: "TCP", readAhead: 1 << 20 });

  it("reads what the server wrote before it exited while its stream was held, then fails the turn as lost", async () => {
    const { dir, session, turn, release, progress } = await floodHeld(true);
    let flushed = 0;
    try {
      await blocked(session, progress);
      writeFileSync(join(dir, "exit"), "");
      await expect.poll(() => existsSync(join(dir, "flushed")), { timeout: 60_000 }).toBe(true);
      flushed = Number(readFileSync(join(dir, "flushed"), "utf8"));
      // Read with the log still behind: each delta's event holds at least its text.
      await expect
        .poll(() => waiting(session), { timeout: 60_000 })
        .toBeGreaterThanOrEqual(flushed * (FLOOD_PAD + 6));
    } finally {
      release();
    }
    expect((await turn.settled).status).toBe("failed");
    const deltas = (await events(session)).filter((e) => e.type === "assistant.delta");
    // Every delta the server's socket took before it exited, in order (one it had half sent may follow).
    expect(deltas.length).toBeGreaterThanOrEqual(flushed);
    deltas.forEach((e, i) => {
      if ((e.data as { text: string }).text !== floodText(i)) expect.fail(`delta ${i} is not in its place`);
    });
  }, 180_000);
});
