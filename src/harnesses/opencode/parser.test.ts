// The event mapper on real opencode 1.18.33 captures of `/event`: a shell turn, an approved `touch`, an aborted
// slow turn (sse-1), and a resumed server (sse-2).
import { describe, expect, it } from "vitest";
import { transcriptLines } from "../../testing/transcripts.js";
import type { CliEvent } from "../cli/events.js";
import { OpencodeEventMapper, type OpencodeSignal } from "./parser.js";

function parse(path: string): OpencodeSignal[] {
  const mapper = new OpencodeEventMapper("ses_dd474357cffeBoXosp62NbmHJ6");
  return transcriptLines(path).flatMap((line) => mapper.handle(line));
}

function turns(signals: OpencodeSignal[]): OpencodeSignal[][] {
  const out: OpencodeSignal[][] = [[]];
  for (const signal of signals) {
    out.at(-1)!.push(signal);
    if (signal.kind === "end") out.push([]);
  }
  return out.filter((t) => t.length > 0);
}

const events = (signals: OpencodeSignal[]): CliEvent[] =>
  signals.flatMap((s) => (s.kind === "event" ? [s.event] : []));
const text = (signals: OpencodeSignal[]) =>
  events(signals)
    .flatMap((e) => (e.type === "assistant.delta" ? [e.data.text] : []))
    .join("");

describe("opencode /event transcript", () => {
  const [first, second, third] = turns(parse("opencode/sse-1.jsonl"));

  it("maps a shell turn: bash call and result, the answer's deltas, messages with tokens and cost", () => {
    const evs = events(first!);
    expect(evs.map((e) => e.type)).toEqual([
      "tool.call",
      "tool.result",
      "assistant.message",
      "assistant.delta",
      "assistant.delta",
      "assistant.message",
    ]);
    expect(evs[0]?.data).toEqual({ id: "call_fake_1", name: "bash", arguments: { command: "ls -1" } });
    expect(evs[1]?.data).toMatchObject({
      id: "call_fake_1",
      content: [{ text: "README.md\nindex.js\n" }],
      is_error: false,
    });
    expect(evs[5]?.data).toEqual({
      text: "done",
      usage: { input: 42, output: 7, cache_read: 0, cache_write: 0, cost: 0 },
      stop_reason: "stop",
    });
    expect(first!.at(-1)).toEqual({ kind: "end", end: { outcome: "completed" } });
  });

  it("turns permission.asked into a permission request for the bash tool", () => {
    const permission = second!.find((s) => s.kind === "permission");
    expect(permission).toMatchObject({
      kind: "permission",
      tool: "bash",
      arguments: { patterns: ["touch created-by-agent.txt"] },
    });
    // Named by its callID, the id its tool.call has: a client shows the request on that call.
    const call = events(second!).find((e) => e.type === "tool.call");
    expect(permission).toMatchObject({ callId: (call!.data as { id: string }).id });
    const kinds = second!.map((s) => (s.kind === "event" ? s.event.type : s.kind));
    expect(kinds.indexOf("tool.call")).toBeLessThan(kinds.indexOf("permission"));
    expect(kinds.indexOf("permission")).toBeLessThan(kinds.indexOf("tool.result"));
  });

  it("ends the aborted turn as aborted, with the streamed text in an aborted message", () => {
    expect(third!.at(-1)).toEqual({ kind: "end", end: { outcome: "aborted" } });
    expect(text(third!)).toMatch(/^tick0 tick1 /);
    expect(events(third!).find((e) => e.type === "assistant.message")?.data).toMatchObject({
      text: text(third!),
      stop_reason: "aborted",
    });
  });

  it("maps the resumed server's turn", () => {
    const resumed = turns(parse("opencode/sse-2.jsonl"));
    expect(resumed.map(text).join("|")).toContain("hello from fake");
    expect(resumed.at(-1)?.at(-1)).toEqual({ kind: "end", end: { outcome: "completed" } });
  });

  it("skips other sessions, reports other errors as provider_error", () => {
    const mapper = new OpencodeEventMapper("mine");
    expect(
      mapper.handle({
        type: "message.part.delta",
        properties: { sessionID: "other", partID: "p", field: "text", delta: "x" },
      }),
    ).toEqual([]);
    mapper.handle({
      type: "session.error",
      properties: { sessionID: "mine", error: { name: "APIError", data: { message: "429" } } },
    });
    expect(mapper.handle({ type: "session.idle", properties: { sessionID: "mine" } })).toEqual([
      { kind: "end", end: { outcome: "failed", code: "provider_error", message: "opencode: APIError: 429" } },
    ]);
  });

  // Shapes as opencode 1.18.33 sends them (question.asked of its `question` tool; a `task` subagent's session).
  it("maps question.asked to a question, after the call it belongs to", () => {
    const mapper = new OpencodeEventMapper("mine");
    const part = { id: "prt_1", sessionID: "mine", messageID: "msg_1", type: "tool", callID: "call_1_0" };
    mapper.handle({
      type: "message.updated",
      properties: { info: { id: "msg_1", sessionID: "mine", role: "assistant" } },
    });
    mapper.handle({
      type: "message.part.updated",
      properties: { part: { ...part, tool: "question", state: { status: "pending", input: {} } } },
    });
    const questions = [
      {
        question: "Which colour?",
        header: "Colour",
        options: [{ label: "red", description: "r" }],
        multiple: true,
      },
    ];
    expect(
      mapper.handle({
        type: "question.asked",
        properties: {
          id: "que_1",
          sessionID: "mine",
          questions,
          tool: { messageID: "msg_1", callID: "call_1_0" },
        },
      }),
    ).toEqual([
      {
        kind: "event",
        event: { type: "tool.call", data: { id: "call_1_0", name: "question", arguments: { questions } } },
      },
      { kind: "question", id: "que_1", questions },
    ]);
  });

  it("passes on the requests of its subagents' sessions (and theirs), nothing else of them", () => {
    const mapper = new OpencodeEventMapper("mine");
    const created = (id: string, parentID: string) => ({
      type: "session.created",
      properties: { sessionID: id, info: { id, parentID } },
    });
    const asked = (sessionID: string) => ({
      type: "permission.asked",
      properties: { id: `per_${sessionID}`, sessionID, permission: "bash", patterns: ["touch sub.txt"] },
    });
    mapper.handle(created("child", "mine"));
    mapper.handle(created("grandchild", "child"));
    mapper.handle(created("stranger", "other"));
    expect(mapper.handle(asked("grandchild"))).toEqual([
      {
        kind: "permission",
        id: "per_grandchild",
        tool: "bash",
        arguments: { patterns: ["touch sub.txt"] },
        subagent: "grandchild",
      },
    ]);
    expect(mapper.handle(asked("stranger"))).toEqual([]);
    expect(
      mapper.handle({
        type: "question.asked",
        properties: { id: "que_2", sessionID: "child", questions: [] },
      }),
    ).toEqual([{ kind: "question", id: "que_2", questions: [] }]);
    expect(
      mapper.handle({
        type: "message.part.delta",
        properties: { sessionID: "child", partID: "p", field: "text", delta: "x" },
      }),
    ).toEqual([]);
  });
});
