// ACP agents that misbehave, as stand-ins speaking ACP's JSON-RPC on stdio. One goes away in the middle of a turn:
// the turn fails, and what the agent had begun in it (a tool call it never finished) stays in that turn, not
// carried into the next one, which a new process of the agent runs. One answers initialize with a protocol version
// Brain does not speak: the turn fails naming it.
import { writeFileSync } from "node:fs";
import { expect, it } from "vitest";
import type { HarnessEvent } from "../../core/harness.js";
import { bareHarnessOptions, ndjsonProgram, useStandIns } from "../../testing/cli.js";
import { AcpFactory, acpFamilyDescriptor } from "./factory.js";

const AGENT = ndjsonProgram(
  `    const update = (u) => send({ jsonrpc: "2.0", method: "session/update", params: { sessionId: "s1", update: u } });
    if (m.method === "initialize") send({ jsonrpc: "2.0", id: m.id, result: { protocolVersion: Number(process.env.VERSION), agentCapabilities: {} } });
    else if (m.method === "session/new") send({ jsonrpc: "2.0", id: m.id, result: { sessionId: "s1" } });
    else if (m.method === "session/prompt" && first) {
      update({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: "Looking. " } });
      update({ sessionUpdate: "tool_call", toolCallId: "t1", title: "ls", kind: "execute", status: "in_progress", rawInput: { command: "ls" } });
      process.exit(3);
    } else if (m.method === "session/prompt") {
      update({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: "fine" } });
      send({ jsonrpc: "2.0", id: m.id, result: { stopReason: "end_turn" } });
    }`,
  `const fs = require("node:fs");
const first = !fs.existsSync(process.env.RAN);
fs.writeFileSync(process.env.RAN, "");`,
);

const standIns = useStandIns();
const descriptor = acpFamilyDescriptor("stand-in", "stand-in-acp", "stand-in-acp", "Stand-in", {});

it("keeps what a crashed agent began in the failed turn out of the next turn", async () => {
  const { dir, bin, native } = standIns.make("brain-acp-lost-", "stand-in-acp", AGENT);
  const events: HarnessEvent[] = [];
  const harness = await new AcpFactory(descriptor, { bin, env: { RAN: `${dir}/ran`, VERSION: "1" } }).open({
    ...bareHarnessOptions(native),
    emit: (event) => void events.push(event),
  });
  try {
    const signal = new AbortController().signal;
    await expect(harness.prompt("one", { turn: "t1", signal })).rejects.toThrow(/exit/);
    expect(await harness.prompt("two", { turn: "t2", signal })).toEqual({ interrupted: false });
    const first = events.filter((e) => e.turn === "t1" && e.type !== "harness.warning");
    expect(first.map((e) => e.type)).toEqual([
      "assistant.delta",
      "assistant.message",
      "tool.call",
      "tool.result",
    ]);
    expect(first[3]).toMatchObject({ data: { id: "t1", is_error: true } });
    const second = events.filter((e) => e.turn === "t2" && e.type !== "harness.warning");
    expect(second).toEqual([
      { type: "assistant.delta", turn: "t2", data: { text: "fine" } },
      { type: "assistant.message", turn: "t2", data: { text: "fine" } },
    ]);
  } finally {
    await harness.close();
  }
});

it("fails the turn naming the version when the agent answers initialize with one Brain does not speak", async () => {
  const { dir, bin, native } = standIns.make("brain-acp-version-", "stand-in-acp", AGENT);
  writeFileSync(`${dir}/ran`, ""); // it answers prompts from its first run
  const harness = await new AcpFactory(descriptor, { bin, env: { RAN: `${dir}/ran`, VERSION: "2" } }).open(
    bareHarnessOptions(native),
  );
  try {
    const signal = new AbortController().signal;
    await expect(harness.prompt("one", { turn: "t1", signal })).rejects.toThrow(
      /stand-in: the agent answered initialize with ACP protocol version 2, and Brain speaks only version 1/,
    );
  } finally {
    await harness.close();
  }
});
