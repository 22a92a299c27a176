// An HTTP/SSE agent streaming a run faster than the session's log makes its events durable (the log's fsync held
// by the test): Brain stops reading the run's event stream while the log is behind by more than BACKLOG_BYTES, so
// what it holds stays bounded and the agent's writes wait on TCP; once the disk comes back, every delta arrives in
// order. The agent is a stand-in in a process of its own (testing/flood-agent.ts).
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect } from "vitest";
import { floodGateTests, progressIn, withoutGate } from "../../testing/backlog.js";
import { useHeldHttpAgent } from "./testing/flood-agent.js";

const heldAgent = useHeldHttpAgent();

/** Starts the flood with the log's next fsync held; returns the fsync's release and how far the agent got. */
async function floodHeld(gated: boolean) {
  const { dir, io, session } = await heldAgent("brain-http-flood-", {}, gated ? undefined : withoutGate);
  const turn = await session.prompt("flood");
  // The fsync is held before the first delta: none of the flood is durable, however busy the machine.
  await expect.poll(() => existsSync(join(dir, "ready")), { timeout: 60_000 }).toBe(true);
  const release = io.holdDurable();
  writeFileSync(join(dir, "go"), "");
  return { session, turn, release, progress: () => progressIn(dir) };
}

describe("an HTTP agent flooding a session whose disk has fallen behind", () => {
  // What the HTTP client had read ahead when the reader stopped: a few of its chunks past the bound.
  floodGateTests(floodHeld, { writer: "the agent", waitsOn: "TCP", readAhead: 1 << 20 });
});
