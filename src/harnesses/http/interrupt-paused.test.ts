// An interrupt while the read gate holds an HTTP agent's run stream (the session's log behind: its fsync held by
// the test). The agent takes POST /cancel at once and ends its run, but its last deltas and its `done` wait in the
// socket Brain is not reading: the interrupt's grace measures the agent's silence on that stream, and while Brain
// does not listen the silence is Brain's. Giving up on the stream then would lose what the agent wrote.
import { describe, expect, it } from "vitest";
import { progressIn } from "../../testing/backlog.js";
import { events } from "../../testing/brain.js";
import { expectInterruptOutlivesHeldLog, interruptWhileHeld } from "../../testing/interrupt-held.js";
import { useHeldHttpAgent } from "./testing/flood-agent.js";

/**
 * The interrupt's grace: short enough to run out many times over while the test holds the log, and long enough
 * to read what waits once it is released (a socket holds megabytes): only a grace counted while the stream is
 * read, never a second of it, outlives the hold.
 */
const GRACE_MS = 2000;

const heldAgent = useHeldHttpAgent();

describe("an interrupt while the read gate holds an HTTP agent's run stream", () => {
  it("does not give up on an agent whose end of run waits unread: the turn ends with all it wrote", async () => {
    const { dir, io, session } = await heldAgent("brain-http-interrupt-", { interruptGraceMs: GRACE_MS });
    await expectInterruptOutlivesHeldLog(session, { io, dir, graceMs: GRACE_MS });
  }, 180_000);

  it("gives up on an agent that leaves its run open once its stream is read again", async () => {
    const { dir, io, session } = await heldAgent(
      "brain-http-interrupt-",
      { interruptGraceMs: GRACE_MS },
      undefined,
      { SILENT: "1" },
    );
    expect((await interruptWhileHeld(session, { io, dir })).status).toBe("interrupted");
    // What the agent wrote before it stopped was read before Brain gave up on its silence.
    const deltas = (await events(session)).filter((e) => e.type === "assistant.delta");
    expect(deltas.length).toBe(progressIn(dir));
  }, 180_000);
});
