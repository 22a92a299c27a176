// A fork of a session on an ACP agent that keeps its sessions where it likes (no preset's files in the native
// dir): the checkpoint holds only the agent's session id, so a fork that loaded it would write into its parent's
// session, each one's turns in the other's history. The fork starts a new agent session with the parent's
// history in its first prompt instead (HarnessFactory.agentSide).
import { expect, it } from "vitest";
import { events, makeBrain, textOf } from "../../testing/brain.js";
import { ndjsonProgram, useStandIns } from "../../testing/cli.js";
import { AcpFactory, acpFamilyDescriptor } from "./factory.js";

// Its sessions live beside the program, outside any native dir, for every process of it: each answer names the
// session and every prompt it holds.
const AGENT = ndjsonProgram(
  `    const file = require("node:path").join(__dirname, "sessions.json");
    const fs = require("node:fs");
    const all = fs.existsSync(file) ? JSON.parse(fs.readFileSync(file, "utf8")) : {};
    if (m.method === "initialize") send({ jsonrpc: "2.0", id: m.id, result: { protocolVersion: 1, agentCapabilities: { loadSession: true } } });
    else if (m.method === "session/new") {
      const id = "s" + (Object.keys(all).length + 1);
      all[id] = [];
      fs.writeFileSync(file, JSON.stringify(all));
      send({ jsonrpc: "2.0", id: m.id, result: { sessionId: id } });
    } else if (m.method === "session/load") send({ jsonrpc: "2.0", id: m.id, result: {} });
    else if (m.method === "session/prompt") {
      const { sessionId, prompt } = m.params;
      all[sessionId].push(prompt.map((p) => p.text).join(""));
      fs.writeFileSync(file, JSON.stringify(all));
      const text = sessionId + ": " + all[sessionId].join(" | ");
      send({ jsonrpc: "2.0", method: "session/update", params: { sessionId, update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text } } } });
      send({ jsonrpc: "2.0", id: m.id, result: { stopReason: "end_turn" } });
    }`,
);

const standIns = useStandIns();

it("forks into a new agent session that carries the parent's history, never into the parent's", async () => {
  const { bin } = standIns.make("brain-acp-fork-", "stand-in-acp", AGENT);
  const descriptor = acpFamilyDescriptor("stand-in", "stand-in-acp", "stand-in-acp", "Stand-in", {});
  const t = makeBrain({ factories: [new AcpFactory(descriptor, { bin })] });
  try {
    const session = await t.brain.create({ harness: "acp:stand-in" });
    await (await session.prompt("one")).settled;
    await session.checkpoint();
    const fork = await t.brain.fork(session.id);
    const forked = await fork.prompt("three");
    expect((await forked.settled).status).toBe("completed");
    const text = textOf(await events(fork), forked.turn);
    expect(text).toMatch(/^s2: \[Conversation history/);
    expect(text).toMatch(/one[\s\S]*three$/);
    const parent = await session.prompt("five");
    await parent.settled;
    expect(textOf(await events(session), parent.turn)).toBe("s1: one | five");
  } finally {
    await t.cleanup();
  }
});
