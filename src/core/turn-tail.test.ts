// The end of a turn: turn.settled is appended behind the turn's last events without waiting for them to be
// durable, so it joins their commit while the commit before is still being written; and a write that fails
// meanwhile fails it too, so the turn never reads completed over a lost event.
import { rmSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import type { SessionEvent } from "../protocol/events.js";
import { FsSessionStore } from "../store/fs/index.js";
import { MODES, type TestIO, testIO } from "../store/fs/testing/fault-io.js";
import { scripted, tempDir } from "../testing/brain.js";
import { BuiltinTools } from "../tools/builtin.js";
import { ToolRouter } from "../tools/router.js";
import { Brain } from "./brain.js";
import type { HarnessFactory, HarnessOptions } from "./harness.js";
import { HarnessRegistry } from "./registry.js";

const tick = () => new Promise((resolve) => setImmediate(resolve));

/** A harness that streams a delta whose commit `io` holds, then ends its turn with the message behind it. */
function endsBehindHeldCommit(io: TestIO, before: (io: TestIO) => void): HarnessFactory {
  const script = async ({ emit }: HarnessOptions, turn: string) => {
    before(io);
    const release = io.holdDurable();
    emit({ type: "assistant.delta", turn, data: { text: "d0" } });
    await tick(); // d0's commit is on its way, and held
    emit({ type: "assistant.message", turn, data: { text: "d0", stop_reason: "stop" } });
    // Released once the turn has ended and its turn.settled is queued (microtasks only, no I/O in between).
    void tick()
      .then(tick)
      .then(() => release());
  };
  return scripted(script);
}

let home: string | undefined;
let brain: Brain | undefined;
afterEach(async () => {
  await brain?.close();
  brain = undefined;
  if (home) rmSync(home, { recursive: true, force: true });
});

async function runTurn(io: TestIO, before: (io: TestIO) => void = () => {}) {
  home = tempDir();
  brain = new Brain({
    store: new FsSessionStore(home, io),
    harnesses: new HarnessRegistry([endsBehindHeldCommit(io, before)]),
    tools: new ToolRouter([new BuiltinTools()]),
  });
  const session = await brain.create({ harness: "scripted" });
  const commits: string[][] = [];
  session.log.subscribe((batch: SessionEvent[]) => commits.push(batch.map((e) => e.type)));
  const turn = await session.prompt("go");
  const outcome = await turn.settled;
  const events = (await session.log.read(0)).filter((e) => e.turn === turn.turn);
  return { outcome, commits, events };
}

describe.each(MODES)("the end of a turn (O_DSYNC writes: %s)", (syncWrites) => {
  it("writes turn.settled in the commit of the turn's message", async () => {
    const { outcome, commits, events } = await runTurn(testIO(syncWrites));
    expect(outcome).toMatchObject({ status: "completed" });
    expect(commits.slice(-2)).toEqual([["assistant.delta"], ["assistant.message", "turn.settled"]]);
    expect(events.map((e) => e.type)).toEqual([
      "user.prompt",
      "turn.started",
      "assistant.delta",
      "assistant.message",
      "turn.settled",
    ]);
  });

  it("settles the turn failed when the commit before its turn.settled fails", async () => {
    // The held commit's durable call fails once released: the message and turn.settled queued behind it fail too.
    const { outcome, events } = await runTurn(testIO(syncWrites), (io) => io.failNext(io.durable, "EIO"));
    expect(outcome).toMatchObject({
      status: "failed",
      error: { message: /could not write the event log: .*EIO/ },
    });
    expect(events.map((e) => e.type)).toEqual(["user.prompt", "turn.started", "turn.settled"]);
    expect(events.at(-1)?.data).toMatchObject({ status: "failed", error: { code: "brain_error" } });
  });
});
