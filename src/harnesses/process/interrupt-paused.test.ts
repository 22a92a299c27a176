// An interrupt while the read gate holds a runner's stdout (the session's log behind: its fsync held by the test).
// The runner stops at once and answers, but its answer waits in the pipe Brain is not reading: the interrupt's
// grace measures the runner's silence, and while Brain does not listen the silence is Brain's. Killing the runner
// then would blame it for a turn it settled, and drop what it wrote before the interrupt.
import { afterEach, describe, it } from "vitest";
import { testIO } from "../../store/fs/testing/fault-io.js";
import { FLOOD_EVENTS } from "../../testing/backlog.js";
import { makeBrain, type TestBrain } from "../../testing/brain.js";
import { inlineRunnerArgs } from "../../testing/inline-runner.js";
import { expectInterruptOutlivesHeldLog } from "../../testing/interrupt-held.js";
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

let t: TestBrain;
afterEach(async () => {
  await t?.cleanup();
});

describe("an interrupt while the read gate holds the runner's stdout", () => {
  it("does not kill a runner whose answer waits unread: the turn ends as the runner says, with all it wrote", async () => {
    const io = testIO();
    t = makeBrain({ factories: [stoppingFlooder()], io });
    const session = await t.brain.create({ harness: "inline" });
    const native = t.store.paths(session.id).native;
    await expectInterruptOutlivesHeldLog(session, { io, dir: native, graceMs: GRACE_MS });
  }, 180_000);
});
