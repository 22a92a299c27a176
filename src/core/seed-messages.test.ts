import { describe, expect, it } from "vitest";
import type { NewEvent, SessionEvent } from "../protocol/events.js";
import { seedMessages } from "./seed-messages.js";
import { transcriptOf } from "./transcript.js";

function log(events: NewEvent[]): SessionEvent[] {
  return events.map((e, i) => ({ ...e, seq: i + 1, ts: "2026-12-01T00:00:00Z", session: "s" }));
}

const result = (id: string, text: string): NewEvent => ({
  type: "tool.result",
  turn: "t1",
  data: { id, content: [{ type: "text", text }], is_error: false },
});

// As Claude Code logs a tool turn: the step's text streams, the call comes, then the step's message repeats it.
const claudeTurn = log([
  { type: "user.prompt", turn: "t1", data: { text: "list" } },
  { type: "assistant.delta", turn: "t1", data: { text: "Let me look." } },
  { type: "tool.call", turn: "t1", data: { id: "c1", name: "Bash", arguments: { command: "ls" } } },
  { type: "assistant.message", turn: "t1", data: { text: "Let me look." } },
  { type: "user.steer", turn: "t1", data: { text: "hurry" } },
  result("c1", "a.txt"),
  { type: "assistant.message", turn: "t1", data: { text: "done" } },
  { type: "turn.settled", turn: "t1", data: { status: "completed" } },
  { type: "user.prompt", turn: "t2", data: { text: "refused" } },
  {
    type: "turn.settled",
    turn: "t2",
    data: { status: "failed", error: { code: "brain_error", message: "x" } },
  },
]);

describe("seedMessages", () => {
  it("keeps a call with its result on the same family, text once, a steer after the result", () => {
    expect(seedMessages(transcriptOf(claudeTurn), { native: () => true })).toEqual([
      { role: "user", text: "list" },
      {
        role: "assistant",
        parts: [
          { type: "text", text: "Let me look." },
          { type: "call", id: "c1", name: "Bash", arguments: { command: "ls" } },
        ],
      },
      { role: "tool", results: [{ id: "c1", name: "Bash", text: "a.txt", is_error: false }] },
      { role: "user", text: "hurry" },
      { role: "assistant", parts: [{ type: "text", text: "done" }] },
    ]);
  });

  it("gives parallel calls' results in the order of the calls, not the order they finished in", () => {
    const parallel = log([
      { type: "user.prompt", turn: "t1", data: { text: "both" } },
      { type: "tool.call", turn: "t1", data: { id: "c1", name: "echo", arguments: { value: "slow" } } },
      { type: "tool.call", turn: "t1", data: { id: "c2", name: "echo", arguments: { value: "fast" } } },
      result("c2", "fast"),
      result("c1", "slow"),
      { type: "assistant.message", turn: "t1", data: { text: "done" } },
    ]);
    const [, , tool] = seedMessages(transcriptOf(parallel), { native: () => true });
    expect(tool).toEqual({
      role: "tool",
      results: [
        { id: "c1", name: "echo", text: "slow", is_error: false },
        { id: "c2", name: "echo", text: "fast", is_error: false },
      ],
    });
  });

  it("carries a call the target lacks as text, and a call left without result gets an error result", () => {
    expect(seedMessages(transcriptOf(claudeTurn), { native: () => false })).toEqual([
      { role: "user", text: "list" },
      {
        role: "assistant",
        parts: [{ type: "text", text: 'Let me look.\n\n[Called tool Bash with {"command":"ls"}]' }],
      },
      { role: "user", text: "hurry" },
      { role: "assistant", parts: [{ type: "text", text: "[Tool Bash returned: a.txt]\n\ndone" }] },
    ]);
    const cut = transcriptOf(claudeTurn.slice(0, 3));
    expect(seedMessages(cut, { native: () => true }).at(-1)).toEqual({
      role: "tool",
      results: [
        {
          id: "c1",
          name: "Bash",
          text: "no result: the turn ended before the tool finished",
          is_error: true,
        },
      ],
    });
  });

  it("keeps a native call's result when an earlier call carried as text had the same id", () => {
    // Another family's built-in, then a bound tool on this one: ids are unique only within one harness's run.
    const events = log([
      { type: "user.prompt", turn: "t1", data: { text: "list" } },
      { type: "tool.call", turn: "t1", data: { id: "call_1", name: "Bash", arguments: { command: "ls" } } },
      result("call_1", "a.txt"),
      { type: "assistant.message", turn: "t1", data: { text: "listed" } },
      { type: "user.prompt", turn: "t2", data: { text: "echo" } },
      { type: "tool.call", turn: "t2", data: { id: "call_1", name: "echo", arguments: { value: "x" } } },
      { ...result("call_1", "x"), turn: "t2" },
      { type: "assistant.message", turn: "t2", data: { text: "done" } },
    ]);
    expect(seedMessages(transcriptOf(events), { native: (name) => name === "echo" })).toEqual([
      { role: "user", text: "list" },
      {
        role: "assistant",
        parts: [
          {
            type: "text",
            text: '[Called tool Bash with {"command":"ls"}]\n\n[Tool Bash returned: a.txt]\n\nlisted',
          },
        ],
      },
      { role: "user", text: "echo" },
      { role: "assistant", parts: [{ type: "call", id: "call_1", name: "echo", arguments: { value: "x" } }] },
      { role: "tool", results: [{ id: "call_1", name: "echo", text: "x", is_error: false }] },
      { role: "assistant", parts: [{ type: "text", text: "done" }] },
    ]);
  });
});
