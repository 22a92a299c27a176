// The stream-json parser on real Claude Code captures (2.1.197 and 2.1.332): one long-lived process that ran a
// shell tool turn, an approved `touch`, and an interrupted slow turn, then a resumed process.
import { describe, expect, it } from "vitest";
import { transcriptLines } from "../../testing/transcripts.js";
import type { CliEvent } from "../cli/events.js";
import { type ClaudeSignal, ClaudeStreamParser } from "./parser.js";

function parse(path: string): ClaudeSignal[] {
  const parser = new ClaudeStreamParser();
  return transcriptLines(path).flatMap((line) => parser.handle(line));
}

/** Splits the signals into turns at each `end`. */
function turns(signals: ClaudeSignal[]): ClaudeSignal[][] {
  const out: ClaudeSignal[][] = [[]];
  for (const signal of signals) {
    out.at(-1)!.push(signal);
    if (signal.kind === "end") out.push([]);
  }
  return out.filter((t) => t.length > 0);
}

const events = (signals: ClaudeSignal[]): CliEvent[] =>
  signals.flatMap((s) => (s.kind === "event" ? [s.event] : []));
const text = (signals: ClaudeSignal[]) =>
  events(signals)
    .flatMap((e) => (e.type === "assistant.delta" ? [e.data.text] : []))
    .join("");

describe.each(["claude/a-stream.jsonl", "claude-2.1.332/a-stream.jsonl"])("%s", (path) => {
  const all = parse(path);
  const [first, second, third] = turns(all);

  it("reports the CLI's session id", () => {
    const ids = new Set(all.flatMap((s) => (s.kind === "session" ? [s.id] : [])));
    expect(ids.size).toBe(1);
  });

  it("maps a shell tool turn: deltas, the Bash call and its result, messages with usage, cost on the last", () => {
    expect(text(first!)).toBe("Let me look.done");
    const evs = events(first!);
    expect(evs.map((e) => e.type)).toEqual([
      "assistant.delta",
      "assistant.delta",
      "assistant.delta",
      "tool.call",
      "assistant.message",
      "tool.result",
      "assistant.delta",
      "assistant.delta",
      "assistant.message",
    ]);
    const call = evs.find((e) => e.type === "tool.call");
    expect(call?.data).toMatchObject({ name: "Bash", arguments: { command: "ls -1" } });
    const result = evs.find((e) => e.type === "tool.result");
    expect(result?.data).toMatchObject({
      id: (call?.data as { id: string } | undefined)?.id,
      content: [{ type: "text", text: "README.md\nindex.js" }],
      is_error: false,
    });
    const messages = evs.filter((e) => e.type === "assistant.message").map((e) => e.data);
    expect(messages[0]).toMatchObject({
      text: "Let me look.",
      stop_reason: "tool_use",
      usage: { input: 42, output: 7 },
    });
    expect(messages[1]).toMatchObject({ text: "done", stop_reason: "end_turn" });
    expect(messages[1]?.usage?.cost).toBeGreaterThan(0);
    expect(first!.at(-1)).toEqual({ kind: "end", end: { outcome: "completed" } });
  });

  it("turns can_use_tool into a permission request, between the call and its result", () => {
    const kinds = second!.map((s) => (s.kind === "event" ? s.event.type : s.kind));
    const permission = second!.find((s) => s.kind === "permission");
    expect(permission).toMatchObject({
      kind: "permission",
      tool: "Bash",
      input: { command: "touch created-by-agent.txt" },
    });
    // Named by its tool_use id, the id its tool.call has: a client shows the request on that call.
    const call = events(second!).find((e) => e.type === "tool.call");
    expect(permission).toMatchObject({ toolUseId: (call!.data as { id: string }).id });
    expect(kinds.indexOf("tool.call")).toBeLessThan(kinds.indexOf("permission"));
    expect(kinds.indexOf("permission")).toBeLessThan(kinds.indexOf("tool.result"));
  });

  it("ends an interrupted turn as aborted, with the partial text in an aborted message", () => {
    expect(third!.at(-1)).toEqual({ kind: "end", end: { outcome: "aborted" } });
    const message = events(third!).find((e) => e.type === "assistant.message");
    expect(message?.data).toMatchObject({ stop_reason: "aborted" });
    expect((message?.data as { text: string } | undefined)?.text).toMatch(/^tick0 tick1 /);
    expect(text(third!)).toBe((message?.data as { text: string } | undefined)?.text);
  });
});

describe("a resumed process", () => {
  it("streams the answer and ends completed", () => {
    const signals = parse("claude/b-resume.jsonl");
    expect(text(signals)).toBe("hello from fake");
    expect(signals.at(-1)).toEqual({ kind: "end", end: { outcome: "completed" } });
  });
});

describe("leniency and failures", () => {
  it("skips unknown types, sub-agent traffic and junk values without failing", () => {
    const parser = new ClaudeStreamParser();
    expect(parser.handle({ type: "tool_progress", x: 1 })).toEqual([]);
    expect(parser.handle({ type: "system", subtype: "hook_started" })).toEqual([]);
    expect(parser.handle(null)).toEqual([]);
    expect(parser.handle(42)).toEqual([]);
    const sub = {
      type: "stream_event",
      parent_tool_use_id: "toolu_1",
      event: { type: "content_block_delta", delta: { type: "text_delta", text: "x" } },
    };
    expect(parser.handle(sub)).toEqual([]);
  });

  it("reports a provider failure as provider_error, other failures as brain_error", () => {
    const parser = new ClaudeStreamParser();
    const api = parser.handle({
      type: "result",
      subtype: "success",
      is_error: true,
      api_error_status: 500,
      result: "API Error: 500 boom",
    });
    expect(api.at(-1)).toEqual({
      kind: "end",
      end: { outcome: "failed", code: "provider_error", message: "claude-code: API Error: 500 boom" },
    });
    const other = parser.handle({
      type: "result",
      subtype: "error_during_execution",
      is_error: true,
      errors: ["No conversation found"],
    });
    expect(other.at(-1)).toMatchObject({
      end: {
        outcome: "failed",
        code: "brain_error",
        message: expect.stringMatching(/No conversation found/),
      },
    });
  });

  it("answers control requests it does not serve with an error signal", () => {
    const parser = new ClaudeStreamParser();
    expect(
      parser.handle({ type: "control_request", request_id: "r1", request: { subtype: "hook_callback" } }),
    ).toEqual([{ kind: "control-unsupported", requestId: "r1", subtype: "hook_callback" }]);
  });
});
