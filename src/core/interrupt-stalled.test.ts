// An interrupt asked while the session's disk is stalled (its fsync held): the runaway agent hears of it at once,
// not once the log can record it; the user.interrupt that records it is appended before the turn's close-out, and
// the interrupt is answered only once it is durable (nothing acknowledged is lost).
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ProcessFactory } from "../harnesses/process/factory.js";
import { testIO } from "../store/fs/testing/fault-io.js";
import { events, makeBrain, type TestBrain } from "../testing/brain.js";
import { inlineRunnerArgs } from "../testing/inline-runner.js";

/**
 * A runner whose prompt runs until it is interrupted: it writes `running` in its native dir when prompted, and
 * `interrupted` when the interrupt reaches it, then ends the turn.
 */
function runawayRunner(): ProcessFactory {
  const args = inlineRunnerArgs(
    "const dirs = new Map(); let prompt;",
    `
  if (!f.method) return;
  if (f.method === "open") { dirs.set(f.attachment, f.params.dir); reply({}); }
  else if (f.method === "prompt") { prompt = reply; fs.writeFileSync(dirs.get(f.attachment) + "/running", ""); }
  else if (f.method === "interrupt") {
    fs.writeFileSync(dirs.get(f.attachment) + "/interrupted", "");
    reply({});
    prompt?.({});
  }
  else reply(f.method === "checkpoint" ? [] : {});`,
  );
  return new ProcessFactory({ name: "runaway", command: process.execPath, args });
}

let t: TestBrain;
afterEach(async () => {
  await t?.cleanup();
});

/** The runaway runner's turn under way, then the log's next fsync held; returns its release. */
async function runningHeld() {
  const io = testIO();
  t = makeBrain({ factories: [runawayRunner()], io });
  const session = await t.brain.create({ harness: "runaway" });
  const turn = await session.prompt("run");
  const native = t.store.paths(session.id).native;
  await expect.poll(() => existsSync(join(native, "running")), { timeout: 30_000 }).toBe(true);
  return { session, turn, native, release: io.holdDurable() };
}

describe("an interrupt while the session's disk is stalled", () => {
  it("reaches the harness at once, and is answered once the log holds it, before the turn's close-out", async () => {
    const { session, turn, native, release } = await runningHeld();
    let answered = false;
    const interrupting = session.interrupt("stop-1").then(() => {
      answered = true;
    });
    try {
      await expect.poll(() => existsSync(join(native, "interrupted")), { timeout: 30_000 }).toBe(true);
      // Not answered while the disk holds its record.
      expect(answered).toBe(false);
    } finally {
      release();
    }
    await interrupting;
    expect((await turn.settled).status).toBe("interrupted");
    const logged = (await events(session)).filter((e) => e.turn === turn.turn).map((e) => e.type);
    expect(logged.indexOf("user.interrupt")).toBeGreaterThan(-1);
    expect(logged.indexOf("user.interrupt")).toBeLessThan(logged.indexOf("turn.settled"));
  }, 120_000);

  it("lets a close asked for meanwhile stop the agent at once too, and finish once the disk is back", async () => {
    const { session, turn, native, release } = await runningHeld();
    const closing = session.close();
    try {
      await expect.poll(() => existsSync(join(native, "interrupted")), { timeout: 30_000 }).toBe(true);
    } finally {
      release();
    }
    await closing;
    expect((await turn.settled).status).toBe("interrupted");
  }, 120_000);
});
