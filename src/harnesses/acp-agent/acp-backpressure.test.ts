// An ACP agent that streams faster than the session's log makes its events durable (the log's fsync held by the
// test): ACP agents are read through the CLI families' one CliProcess, whose stdout the read gate pauses, and the
// ACP SDK then reads its messages from the stream Brain fills from that pipe. What Brain holds stays within the
// bound plus one pipe read, the agent blocks on its full pipe, and every chunk arrives in order once the disk is
// back. The agent is a stand-in speaking ACP's JSON-RPC on stdio.
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect } from "vitest";
import { testIO } from "../../store/fs/testing/fault-io.js";
import { FLOOD_EVENTS, FLOOD_PAD, floodGateTests, progressIn, withoutGate } from "../../testing/backlog.js";
import { makeBrain, type TestBrain } from "../../testing/brain.js";
import { ndjsonProgram, useStandIns } from "../../testing/cli.js";
import { AcpFactory, acpFamilyDescriptor } from "./factory.js";

/**
 * initialize and session/new; at the prompt "flood", once told to go (a file `go` beside `ready`, both in $DIR),
 * FLOOD_EVENTS agent_message_chunk updates as fast as its stdout takes them, noting in `progress` how many it has
 * written, then the prompt's result; any other prompt it answers at once.
 */
const AGENT = ndjsonProgram(
  `    if (m.method === "initialize") send({ jsonrpc: "2.0", id: m.id, result: { protocolVersion: 1, agentCapabilities: {} } });
    else if (m.method === "session/new") send({ jsonrpc: "2.0", id: m.id, result: { sessionId: "s1" } });
    else if (m.method === "session/prompt") answer(m.id, m.params.prompt.map((p) => p.text ?? "").join(""));`,
  `const fs = require("node:fs");
const dir = process.env.DIR;
const chunk = (text) => send({ jsonrpc: "2.0", method: "session/update",
  params: { sessionId: "s1", update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text } } } });
async function answer(id, text) {
  if (text === "flood") {
    fs.writeFileSync(dir + "/ready", "");
    while (!fs.existsSync(dir + "/go")) await new Promise((r) => setTimeout(r, 5));
    for (let i = 0; i < ${FLOOD_EVENTS}; i++) {
      const more = chunk(String(i).padStart(6, "0") + "x".repeat(${FLOOD_PAD}));
      if (i % 16 === 15) fs.writeFileSync(dir + "/progress", String(i + 1));
      if (!more) await new Promise((r) => process.stdout.once("drain", r));
    }
    fs.writeFileSync(dir + "/progress", "${FLOOD_EVENTS}");
  } else chunk("echo: " + text);
  send({ jsonrpc: "2.0", id, result: { stopReason: "end_turn" } });
}`,
);

const standIns = useStandIns();
const descriptor = acpFamilyDescriptor("stand-in", "stand-in-acp", "stand-in-acp", "Stand-in", {});
let t: TestBrain;
afterEach(async () => {
  await t?.cleanup();
});

/** Starts the flood with the log's next fsync held; returns the fsync's release and how far the agent got. */
async function floodHeld(gated: boolean) {
  const { dir, bin } = standIns.make("brain-acp-flood-", "stand-in-acp", AGENT);
  const factory = new AcpFactory(descriptor, { bin, env: { DIR: dir } });
  const io = testIO();
  t = makeBrain({
    factories: [gated ? factory : withoutGate(factory)],
    provider: { base_url: "http://127.0.0.1:9", api_key: "sk-fake" },
    io,
  });
  const session = await t.brain.create({ harness: "acp:stand-in" });
  const turn = await session.prompt("flood");
  // The fsync is held before the first chunk: none of the flood is durable, however busy the machine.
  await expect.poll(() => existsSync(join(dir, "ready")), { timeout: 60_000 }).toBe(true);
  const release = io.holdDurable();
  writeFileSync(join(dir, "go"), "");
  return { session, turn, release, progress: () => progressIn(dir) };
}

describe("an ACP agent flooding a session whose disk has fallen behind", () => {
  floodGateTests(floodHeld, { writer: "the agent", waitsOn: "its pipe" });
});
