// An interrupt while the read gate holds a runner's stdout (the session's log behind: its fsync held by the test).
// The runner stops at once and answers, but its answer waits in the pipe Brain is not reading: the interrupt's
// grace measures the runner's silence, and while Brain does not listen the silence is Brain's. Killing the runner
// then would blame it for a turn it settled, and drop what it wrote before the interrupt.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { testIO } from "../../store/fs/testing/fault-io.js";
import { blocked, FLOOD_EVENTS, floodText, progressIn } from "../../testing/backlog.js";
import { events, makeBrain, type TestBrain } from "../../testing/brain.js";
import { inlineRunnerArgs } from "../../testing/inline-runner.js";
import { ProcessFactory } from "./factory.js";

/** The interrupt's grace: short enough to run out many times over while the test holds the log. */
const GRACE_MS = 400;

/**
 * floodingRunner's flood (testing/backlog.ts) that stops at an interrupt: it notes `interrupted`, stops writing
 * deltas once its pipe takes the one it is on, notes in `progress` how many it wrote, and answers the prompt as
 * interrupted. It writes its pid into `pid` when opened.
 */
function stoppingFlooder(): ProcessFactory {
  const onPrompt = `
    const dir = dirs.get(f.attachment);
    fs.writeFileSync(dir + "/ready", "");
    while (!fs.existsSync(dir + "/go")) await new Promise((r) => setTimeout(r, 5));
    let i = 0;
    for (; i < ${FLOOD_EVENTS} && !stopped; i++) {
      const more = delta(String(i).padStart(6, "0") + "x".repeat(1000));
      if (i % 16 === 15) fs.writeFileSync(dir + "/progress", String(i + 1));
      if (!more) await new Promise((r) => process.stdout.once("drain", r));
    }
    fs.writeFileSync(dir + "/progress", String(i));
    reply({ interrupted: stopped });`;
  const args = inlineRunnerArgs(
    "const dirs = new Map(); let stopped = false;",
    `
  const delta = (text) => send({ attachment: f.attachment, turn: f.turn, event: "assistant.delta", data: { text } });
  if (!f.method) return;
  if (f.method === "open") {
    dirs.set(f.attachment, f.params.dir);
    fs.writeFileSync(f.params.dir + "/pid", String(process.pid));
    reply({});
  } else if (f.method === "prompt") (async () => { ${onPrompt} })();
  else if (f.method === "interrupt") {
    stopped = true;
    fs.writeFileSync(dirs.get(f.attachment) + "/interrupted", "");
    reply({});
  } else reply(f.method === "checkpoint" ? [] : {});`,
  );
  return new ProcessFactory({
    name: "inline",
    command: process.execPath,
    args,
    timeouts: { interruptGraceMs: GRACE_MS },
  });
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

let t: TestBrain;
afterEach(async () => {
  await t?.cleanup();
});

describe("an interrupt while the read gate holds the runner's stdout", () => {
  it("does not kill a runner whose answer waits unread: the turn ends as the runner says, with all it wrote", async () => {
    const io = testIO();
    t = makeBrain({ factories: [stoppingFlooder()], io });
    const session = await t.brain.create({ harness: "inline" });
    const turn = await session.prompt("flood");
    const native = t.store.paths(session.id).native;
    await expect.poll(() => existsSync(join(native, "ready")), { timeout: 30_000 }).toBe(true);
    const release = io.holdDurable();
    let interrupting: Promise<void> | undefined;
    try {
      writeFileSync(join(native, "go"), "");
      await blocked(session, () => progressIn(native));
      const pid = Number(readFileSync(join(native, "pid"), "utf8"));
      interrupting = session.interrupt();
      await expect.poll(() => existsSync(join(native, "interrupted")), { timeout: 30_000 }).toBe(true);
      // The grace runs out ten times over while the log is held (the runner was killed at the first).
      await new Promise((resolve) => setTimeout(resolve, 10 * GRACE_MS));
      expect(alive(pid)).toBe(true);
    } finally {
      release();
    }
    await interrupting;
    expect((await turn.settled).status).toBe("interrupted");
    const all = await events(session);
    expect(all.filter((e) => e.type === "harness.warning").map((e) => e.data)).toEqual([]);
    // Every delta the runner wrote before it stopped is in the log, in order.
    const written = Number(readFileSync(join(native, "progress"), "utf8"));
    expect(written).toBeLessThan(FLOOD_EVENTS);
    const text = all
      .filter((e) => e.type === "assistant.delta")
      .map((e) => (e.data as { text: string }).text)
      .join("");
    expect(text === Array.from({ length: written }, (_, i) => floodText(i)).join("")).toBe(true);
  }, 180_000);
});
