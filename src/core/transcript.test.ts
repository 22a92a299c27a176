import { describe, expect, it } from "vitest";
import type { NewEvent, SessionEvent } from "../protocol/events.js";
import { eventsUpTo, heldTurns, historyPreamble, transcriptOf } from "./transcript.js";

function log(events: NewEvent[]): SessionEvent[] {
  return events.map((e, i) => ({ ...e, seq: i + 1, ts: "2026-12-01T00:00:00Z", session: "s" }));
}

const opened: NewEvent = {
  type: "session.opened",
  data: { harness: "claude-code", config: { model: "m1", system_prompt: "be brief" } },
};

describe("transcriptOf", () => {
  it("keeps prompts, text, tool calls with their results, steers and compactions in log order", () => {
    const t = transcriptOf(
      log([
        opened,
        { type: "user.prompt", turn: "t1", data: { text: "list files" } },
        { type: "turn.started", turn: "t1", data: {} },
        { type: "assistant.delta", turn: "t1", data: { text: "Let me" } },
        { type: "assistant.message", turn: "t1", data: { text: "Let me look." } },
        { type: "tool.call", turn: "t1", data: { id: "c1", name: "Bash", arguments: { command: "ls" } } },
        { type: "user.steer", turn: "t1", data: { text: "only .ts", queued: true } },
        {
          type: "tool.result",
          turn: "t1",
          data: { id: "c1", content: [{ type: "text", text: "a.ts" }], is_error: false },
        },
        { type: "assistant.message", turn: "t1", data: { text: "" } },
        { type: "assistant.message", turn: "t1", data: { text: "done" } },
        { type: "context.compacted", turn: "t1", data: { summary: "we listed files" } },
        { type: "turn.settled", turn: "t1", data: { status: "completed" } },
      ]),
    );
    expect(t).toEqual({
      harness: "claude-code",
      model: "m1",
      system_prompt: "be brief",
      items: [
        { kind: "user", turn: "t1", text: "list files" },
        { kind: "assistant", turn: "t1", text: "Let me look." },
        { kind: "tool_call", turn: "t1", id: "c1", name: "Bash", arguments: { command: "ls" } },
        { kind: "steer", turn: "t1", text: "only .ts" },
        { kind: "tool_result", turn: "t1", id: "c1", name: "Bash", text: "a.ts", is_error: false },
        { kind: "assistant", turn: "t1", text: "done" },
        { kind: "compaction", turn: "t1", summary: "we listed files" },
      ],
    });
  });

  it("keeps text that was only streamed (a step that ended in tool calls) as assistant text", () => {
    const t = transcriptOf(
      log([
        { type: "user.prompt", turn: "t1", data: { text: "go" } },
        { type: "assistant.delta", turn: "t1", data: { text: "Calling " } },
        { type: "assistant.delta", turn: "t1", data: { text: "echo." } },
        { type: "tool.call", turn: "t1", data: { id: "c1", name: "echo", arguments: {} } },
        { type: "assistant.delta", turn: "t1", data: { text: "cut off" } },
      ]),
    );
    expect(t.items.filter((i) => i.kind === "assistant").map((i) => (i as { text: string }).text)).toEqual([
      "Calling echo.",
      "cut off",
    ]);
  });

  it("marks interrupted and failed turns, and counts only the turns the model answered as held", () => {
    const t = transcriptOf(
      log([
        opened,
        { type: "user.prompt", turn: "t1", data: { text: "one" } },
        { type: "assistant.message", turn: "t1", data: { text: "partial" } },
        { type: "user.interrupt", turn: "t1", data: {} },
        { type: "turn.settled", turn: "t1", data: { status: "interrupted" } },
        { type: "user.prompt", turn: "t2", data: { text: "two" } },
        {
          type: "turn.settled",
          turn: "t2",
          data: { status: "failed", error: { code: "provider_error", message: "429" } },
        },
      ]),
    );
    expect(t.items.filter((i) => i.kind === "turn_end")).toEqual([
      { kind: "turn_end", turn: "t1", status: "interrupted" },
      { kind: "turn_end", turn: "t2", status: "failed", error: "429" },
    ]);
    expect(heldTurns(t)).toEqual({ turns: 1, lastPrompt: "one", lastKept: "one" });
    expect(heldTurns(transcriptOf(log([opened])))).toEqual({ turns: 0 });
  });

  it("names the last answered prompt of a turn that did not fail apart from the last answered one", () => {
    const t = transcriptOf(
      log([
        opened,
        { type: "user.prompt", turn: "t1", data: { text: "one" } },
        { type: "assistant.message", turn: "t1", data: { text: "fine" } },
        { type: "turn.settled", turn: "t1", data: { status: "completed" } },
        { type: "user.prompt", turn: "t2", data: { text: "two" } },
        { type: "assistant.delta", turn: "t2", data: { text: "partial" } },
        {
          type: "turn.settled",
          turn: "t2",
          data: { status: "failed", error: { code: "brain_error", message: "runner exited" } },
        },
      ]),
    );
    // A runner that records a turn as it ends kept "one", not the crashed "two".
    expect(heldTurns(t)).toEqual({ turns: 2, lastPrompt: "two", lastKept: "one" });
  });

  it("renders a transcript as marked history before a prompt", () => {
    const t = transcriptOf(
      log([
        { type: "user.prompt", turn: "t1", data: { text: "hi" } },
        { type: "tool.call", turn: "t1", data: { id: "c", name: "read", arguments: { p: 1 } } },
        {
          type: "tool.result",
          turn: "t1",
          data: { id: "c", content: [{ type: "text", text: "boom" }], is_error: true },
        },
      ]),
    );
    const text = historyPreamble(t, "next");
    expect(text).toMatch(/^\[Conversation history, carried over/);
    expect(text).toContain('User: hi\n\nAssistant called tool read with {"p":1}\n\nTool read failed: boom');
    expect(text.endsWith("[End of the conversation history. The new message follows.]\n\nnext")).toBe(true);
  });

  it("cuts events at the first match", () => {
    const all = log([opened, { type: "session.closed", data: {} }, { type: "session.closed", data: {} }]);
    expect(eventsUpTo(all, (e) => e.type === "session.closed").map((e) => e.seq)).toEqual([1, 2]);
    expect(eventsUpTo(all, () => false)).toHaveLength(3);
  });
});
