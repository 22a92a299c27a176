// An ACP agent's permission request for a session other than the one Brain drives in it: not this session's, so
// it is neither logged as this session's call nor put to its policy and clients (whose allow would run it);
// it is cancelled, the answer every agent takes as "do not run".
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import type { HarnessEvent, ToolUse } from "../../core/harness.js";
import { bareHarnessOptions, ndjsonProgram, useStandIns } from "../../testing/cli.js";
import { until } from "../../testing/processes.js";
import { AcpFactory, acpFamilyDescriptor } from "./factory.js";

const AGENT = ndjsonProgram(
  `    const ask = (id, sessionId) => send({ jsonrpc: "2.0", id, method: "session/request_permission", params: { sessionId,
      toolCall: { toolCallId: "call-" + sessionId, title: "rm", kind: "execute", rawInput: { command: "rm -rf x" } },
      options: [{ optionId: "yes", name: "Yes", kind: "allow_once" }, { optionId: "no", name: "No", kind: "reject_once" }] } });
    if (m.method === "initialize") send({ jsonrpc: "2.0", id: m.id, result: { protocolVersion: 1, agentCapabilities: {} } });
    else if (m.method === "session/new") send({ jsonrpc: "2.0", id: m.id, result: { sessionId: "s1" } });
    else if (m.method === "session/prompt") { prompt = m.id; ask(100, "other"); }
    else if (m.id === 100) { outcomes.push(m.result.outcome); ask(101, "s1"); }
    else if (m.id === 101) {
      outcomes.push(m.result.outcome);
      const text = JSON.stringify(outcomes);
      send({ jsonrpc: "2.0", method: "session/update", params: { sessionId: "s1", update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text } } } });
      send({ jsonrpc: "2.0", id: prompt, result: { stopReason: "end_turn" } });
    }`,
  "let prompt; const outcomes = [];",
);

const standIns = useStandIns();
const descriptor = acpFamilyDescriptor("stand-in", "stand-in-acp", "stand-in-acp", "Stand-in", {});

it("cancels a permission request for another session, without logging or asking it", async () => {
  const { bin, native } = standIns.make("brain-acp-foreign-", "stand-in-acp", AGENT);
  const events: HarnessEvent[] = [];
  const asked: ToolUse[] = [];
  const harness = await new AcpFactory(descriptor, { bin }).open({
    ...bareHarnessOptions(native),
    emit: (event) => void events.push(event),
    permit: async (_turn, use) => {
      asked.push(use);
      return { decision: "allow" };
    },
  });
  try {
    await harness.prompt("go", { turn: "t1", signal: new AbortController().signal });
    expect(asked.map((use) => use.tool_call_id)).toEqual(["call-s1"]);
    const calls = events.flatMap((e) => (e.type === "tool.call" ? [e.data.id] : []));
    expect(calls).toEqual(["call-s1"]);
    const message = events.find((e) => e.type === "assistant.message");
    expect(JSON.parse((message!.data as { text: string }).text)).toEqual([
      { outcome: "cancelled" },
      { outcome: "selected", optionId: "yes" },
    ]);
  } finally {
    await harness.close();
  }
});

const EARLY = ndjsonProgram(
  `    const chunk = (sessionId, text) => send({ jsonrpc: "2.0", method: "session/update", params: { sessionId,
      update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text } } } });
    if (m.method === "initialize") send({ jsonrpc: "2.0", id: m.id, result: { protocolVersion: 1, agentCapabilities: {} } });
    else if (m.method === "session/new") {
      chunk("other", "not this session's");
      send({ jsonrpc: "2.0", id: m.id, result: { sessionId: "s1" } });
    } else if (m.method === "session/prompt") {
      chunk("s1", "hello");
      send({ jsonrpc: "2.0", id: m.id, result: { stopReason: "end_turn" } });
    }`,
);

it("drops another session's update that comes before session/new has named the session", async () => {
  const { bin, native } = standIns.make("brain-acp-early-", "stand-in-acp", EARLY);
  const events: HarnessEvent[] = [];
  const harness = await new AcpFactory(descriptor, { bin }).open({
    ...bareHarnessOptions(native),
    emit: (event) => void events.push(event),
  });
  try {
    await harness.prompt("go", { turn: "t1", signal: new AbortController().signal });
    const texts = events.flatMap((e) =>
      e.type === "assistant.delta" || e.type === "assistant.message" ? [[e.type, e.data.text]] : [],
    );
    expect(texts).toEqual([
      ["assistant.delta", "hello"],
      ["assistant.message", "hello"],
    ]);
  } finally {
    await harness.close();
  }
});

/** An agent whose one request offers no "allow once": the only yes it takes is "always" for the rest of its session. */
const ALWAYS_ONLY = ndjsonProgram(
  `    if (m.method === "initialize") send({ jsonrpc: "2.0", id: m.id, result: { protocolVersion: 1, agentCapabilities: {} } });
    else if (m.method === "session/new") send({ jsonrpc: "2.0", id: m.id, result: { sessionId: "s1" } });
    else if (m.method === "session/prompt") {
      prompt = m.id;
      send({ jsonrpc: "2.0", id: 100, method: "session/request_permission", params: { sessionId: "s1",
        toolCall: { toolCallId: "c1", title: "rm", kind: "execute", rawInput: { command: "rm x" } },
        options: [{ optionId: "always", name: "Always", kind: "allow_always" }, { optionId: "no", name: "No", kind: "reject_once" }] } });
    } else if (m.id === 100) {
      const text = JSON.stringify(m.result.outcome);
      send({ jsonrpc: "2.0", method: "session/update", params: { sessionId: "s1", update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text } } } });
      send({ jsonrpc: "2.0", id: prompt, result: { stopReason: "end_turn" } });
    }`,
  "let prompt;",
);

it.each([
  ["not when a person allowed it once (the policy asks)", "ask", { outcome: "cancelled" }],
  ["so when the policy allows it", "allow", { outcome: "selected", optionId: "always" }],
] as const)(
  "picks allow_always only for a tool the policy allows outright: %s",
  async (_, decision, outcome) => {
    const { bin, native } = standIns.make("brain-acp-always-", "stand-in-acp", ALWAYS_ONLY);
    const events: HarnessEvent[] = [];
    const harness = await new AcpFactory(descriptor, { bin }).open({
      ...bareHarnessOptions(native),
      emit: (event) => void events.push(event),
      policy: () => decision,
      permit: async () => ({ decision: "allow" }),
    });
    try {
      await harness.prompt("go", { turn: "t1", signal: new AbortController().signal });
      const message = events.find((e) => e.type === "assistant.message");
      expect(JSON.parse((message!.data as { text: string }).text)).toEqual(outcome);
    } finally {
      await harness.close();
    }
  },
);

/** An agent that asks permission only after Brain cancelled its turn, and writes the answer it got to $DIR/outcome. */
const LATE_ASK = ndjsonProgram(
  `    if (m.method === "initialize") send({ jsonrpc: "2.0", id: m.id, result: { protocolVersion: 1, agentCapabilities: {} } });
    else if (m.method === "session/new") send({ jsonrpc: "2.0", id: m.id, result: { sessionId: "s1" } });
    else if (m.method === "session/prompt") {
      prompt = m.id;
      send({ jsonrpc: "2.0", method: "session/update", params: { sessionId: "s1", update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "working" } } } });
    } else if (m.method === "session/cancel") {
      send({ jsonrpc: "2.0", id: 100, method: "session/request_permission", params: { sessionId: "s1",
        toolCall: { toolCallId: "late", title: "rm", kind: "execute", rawInput: { command: "rm x" } },
        options: [{ optionId: "yes", name: "Yes", kind: "allow_once" }, { optionId: "no", name: "No", kind: "reject_once" }] } });
    } else if (m.id === 100) {
      fs.writeFileSync(process.env.DIR + "/outcome", JSON.stringify(m.result.outcome));
      send({ jsonrpc: "2.0", id: prompt, result: { stopReason: "cancelled" } });
    }`,
  `let prompt; const fs = require("node:fs");`,
);

it("answers a permission request that comes after the turn was cancelled cancelled, asking and logging no one", async () => {
  const { dir, bin, native } = standIns.make("brain-acp-late-", "stand-in-acp", LATE_ASK);
  const events: HarnessEvent[] = [];
  const asked: ToolUse[] = [];
  const harness = await new AcpFactory(descriptor, { bin, env: { DIR: dir } }).open({
    ...bareHarnessOptions(native),
    emit: (event) => void events.push(event),
    permit: async (_turn, use) => {
      asked.push(use);
      return { decision: "deny" };
    },
  });
  try {
    const turn = harness.prompt("go", { turn: "t1", signal: new AbortController().signal });
    await until(() => events.some((e) => e.type === "assistant.delta"));
    await harness.interrupt("t1");
    expect(await turn).toEqual({ interrupted: true });
    expect(JSON.parse(readFileSync(join(dir, "outcome"), "utf8"))).toEqual({ outcome: "cancelled" });
    expect(asked).toEqual([]);
  } finally {
    await harness.close();
  }
});
