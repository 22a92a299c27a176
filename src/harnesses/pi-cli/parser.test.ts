// The RPC-mode parser on real pi 0.73.1 captures, for each of the three APIs pi spoke to the fake provider: a
// shell turn, then an aborted slow turn; and a resumed process.
import { describe, expect, it } from "vitest";
import { transcriptLines } from "../../testing/transcripts.js";
import type { CliEvent } from "../cli/events.js";
import { PiEventParser, type PiSignal } from "./parser.js";

function parse(path: string): PiSignal[] {
  const parser = new PiEventParser();
  return transcriptLines(path).flatMap((line) => parser.handle(line));
}

function turns(signals: PiSignal[]): PiSignal[][] {
  const out: PiSignal[][] = [[]];
  for (const signal of signals) {
    out.at(-1)!.push(signal);
    if (signal.kind === "end") out.push([]);
  }
  return out.filter((t) => t.some((s) => s.kind !== "response"));
}

const events = (signals: PiSignal[]): CliEvent[] =>
  signals.flatMap((s) => (s.kind === "event" ? [s.event] : []));
const text = (signals: PiSignal[]) =>
  events(signals)
    .flatMap((e) => (e.type === "assistant.delta" ? [e.data.text] : []))
    .join("");

describe.each(["openai-completions", "openai-responses", "anthropic-messages"])("pi rpc on %s", (api) => {
  const [first, second] = turns(parse(`pi/${api}-a-rpc.jsonl`));

  it("maps a shell turn: the bash call and its result, deltas, messages with usage and cost", () => {
    const evs = events(first!);
    const call = evs.find((e) => e.type === "tool.call");
    expect(call?.data).toMatchObject({ name: "bash", arguments: { command: "ls -1" } });
    expect(evs.find((e) => e.type === "tool.result")?.data).toMatchObject({
      id: (call?.data as { id: string } | undefined)?.id,
      content: [{ text: "README.md\nindex.js\n" }],
      is_error: false,
    });
    expect(text(first!)).toContain("done");
    const last = evs.filter((e) => e.type === "assistant.message").at(-1);
    expect(last?.data).toMatchObject({ text: "done", usage: { input: expect.any(Number), cost: 0 } });
    expect(first!.at(-1)).toEqual({ kind: "end", end: { outcome: "completed" } });
  });

  it("ends the aborted turn as aborted", () => {
    expect(second!.at(-1)).toEqual({ kind: "end", end: { outcome: "aborted" } });
    expect(events(second!).find((e) => e.type === "assistant.message")?.data).toMatchObject({
      stop_reason: "aborted",
    });
    expect(text(second!)).toMatch(/^tick0 /);
  });
});

describe("pi rpc", () => {
  it("maps a resumed process's turn and the command responses", () => {
    const signals = parse("pi/openai-completions-b-resume.jsonl");
    expect(text(signals)).toBe("hello from fake");
    expect(signals.find((s) => s.kind === "response")).toMatchObject({
      id: "p3",
      command: "prompt",
      success: true,
    });
  });

  it("knows every type real pi wrote: none is said to be unknown", () => {
    const files = ["openai-completions", "openai-responses", "anthropic-messages"].map(
      (api) => `pi/${api}-a-rpc.jsonl`,
    );
    const all = [...files, "pi/openai-completions-b-resume.jsonl"].flatMap(parse);
    expect(all.filter((s) => s.kind === "unknown")).toEqual([]);
  });

  it("reports a failed model call as provider_error, skips unknown types (said once), and turns dialogs into questions", () => {
    const parser = new PiEventParser();
    expect(parser.handle({ type: "queue_update", steering: ["x"] })).toEqual([
      { kind: "queue", steering: ["x"] },
    ]);
    expect(parser.handle({ type: "no_such_event" })).toEqual([{ kind: "unknown", type: "no_such_event" }]);
    expect(parser.handle({ type: "no_such_event" })).toEqual([]);
    parser.handle({
      type: "message_end",
      message: { role: "assistant", content: [], stopReason: "error", errorMessage: "401 bad key" },
    });
    const probe = { kind: "send", command: { id: "settle-1", type: "get_state" } };
    expect(parser.handle({ type: "agent_end" })).toEqual([probe]);
    expect(parser.handle({ type: "response", id: "settle-1", command: "get_state", success: true })).toEqual([
      { kind: "end", end: { outcome: "failed", code: "provider_error", message: "pi-cli: 401 bad key" } },
      { kind: "response", id: "settle-1", command: "get_state", success: true },
    ]);
    expect(
      parser.handle({
        type: "extension_ui_request",
        id: "u1",
        method: "confirm",
        title: "Allow?",
        message: "rm -rf x",
      }),
    ).toEqual([
      { kind: "dialog", id: "u1", method: "confirm", question: "Allow?: rm -rf x", options: ["yes", "no"] },
    ]);
    expect(
      parser.handle({ type: "extension_ui_request", id: "u2", method: "notify", message: "hi" }),
    ).toEqual([]);
  });
});

describe("a failed model call pi may run again", () => {
  const failedCall = (parser: PiEventParser, why: string) => {
    parser.handle({ type: "agent_start" });
    parser.handle({
      type: "message_end",
      message: { role: "assistant", content: [], stopReason: "error", errorMessage: why },
    });
    return parser.handle({ type: "agent_end" });
  };
  const answer = (parser: PiEventParser, id: string) =>
    parser
      .handle({ type: "response", id, command: "get_state", success: true })
      .filter((s) => s.kind === "end");

  it("is not the end of the prompt when pi retries it: the retry's agent_end is", () => {
    const parser = new PiEventParser();
    failedCall(parser, "503 overloaded");
    const retry = parser.handle({
      type: "auto_retry_start",
      attempt: 1,
      maxAttempts: 3,
      errorMessage: "503 overloaded",
    });
    expect(JSON.stringify(retry)).toMatch(/failed \(503 overloaded\); pi tries it again \(attempt 1 of 3\)/);
    expect(answer(parser, "settle-1")).toEqual([]);
    parser.handle({ type: "agent_start" });
    parser.handle({ type: "message_end", message: { role: "assistant", content: [], stopReason: "stop" } });
    expect(parser.handle({ type: "agent_end" })).toEqual([{ kind: "end", end: { outcome: "completed" } }]);
  });

  it("ends the prompt failed when pi gives up, or when an abort cancels the retry", () => {
    const parser = new PiEventParser();
    failedCall(parser, "503 overloaded");
    expect(parser.handle({ type: "auto_retry_end", success: false, finalError: "503 overloaded" })).toEqual(
      [],
    );
    expect(answer(parser, "settle-1")).toEqual([
      { kind: "end", end: { outcome: "failed", code: "provider_error", message: "pi-cli: 503 overloaded" } },
    ]);
    failedCall(parser, "429 slow down");
    parser.handle({ type: "auto_retry_start", attempt: 1, maxAttempts: 3, errorMessage: "429 slow down" });
    expect(parser.handle({ type: "auto_retry_end", success: false, finalError: "Retry cancelled" })).toEqual([
      { kind: "send", command: { id: "settle-3", type: "get_state" } },
    ]);
    expect(answer(parser, "settle-2")).toEqual([]);
    expect(answer(parser, "settle-3")).toEqual([
      { kind: "end", end: { outcome: "failed", code: "provider_error", message: "pi-cli: Retry cancelled" } },
    ]);
  });

  it("waits for a compaction after an overflow: it either runs the prompt again or ends it", () => {
    const parser = new PiEventParser();
    failedCall(parser, "context_length_exceeded");
    parser.handle({ type: "compaction_start", reason: "overflow" });
    expect(answer(parser, "settle-1")).toEqual([]);
    expect(parser.handle({ type: "compaction_end", reason: "overflow", willRetry: true })).toEqual([]);
    failedCall(parser, "context_length_exceeded");
    parser.handle({ type: "compaction_start", reason: "overflow" });
    expect(answer(parser, "settle-2")).toEqual([]);
    expect(parser.handle({ type: "compaction_end", reason: "overflow", willRetry: false })).toEqual([
      {
        kind: "end",
        end: { outcome: "failed", code: "provider_error", message: "pi-cli: context_length_exceeded" },
      },
    ]);
  });
});
