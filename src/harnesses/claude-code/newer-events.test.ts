// A newer Claude Code says things this Brain does not know: stdout lines and stream events of types it has no case
// for. They are skipped, never fatal, and each type is said once: a Claude Code that renamed its stream events
// would otherwise look like a turn that went quiet. What Claude Code 2.1 writes is all known: its captures, and a
// real Claude Code's turn under unshare -n, say nothing.
import { expect, it, vi } from "vitest";
import { amid, expectRealTurnSaysNoTypeUnknown } from "../../testing/cli-newer-events.js";
import { transcriptLines } from "../../testing/transcripts.js";
import { locateCli } from "../cli/locate.js";
import { type ClaudeSignal, ClaudeStreamParser } from "./parser.js";
import { claudeCodeCase } from "./testing/case.js";

vi.setConfig({ testTimeout: 180_000, hookTimeout: 60_000 });

const parse = (lines: unknown[]): ClaudeSignal[] => {
  const parser = new ClaudeStreamParser();
  return lines.flatMap((line) => parser.handle(line));
};
const unknown = (signals: ClaudeSignal[]) => signals.filter((s) => s.kind === "unknown");
const CAPTURES = ["claude/a-stream.jsonl", "claude/b-resume.jsonl", "claude-2.1.332/a-stream.jsonl"];

it("knows every type real Claude Code wrote: none is said to be unknown", () => {
  const all = CAPTURES.flatMap((path) => parse(transcriptLines(path)));
  expect(all.length).toBeGreaterThan(0);
  expect(unknown(all)).toEqual([]);
});

it("skips a line and a stream event of types it does not know, saying each type once, and reads the rest", () => {
  const captured = transcriptLines("claude/a-stream.jsonl");
  const line = { type: "assistant_delta", text: "hi", session_id: "s" };
  const streamed = {
    type: "stream_event",
    event: { type: "content_block_text", text: "hi" },
    session_id: "s",
  };
  const signals = parse(amid([line, streamed], captured, 20));
  expect(unknown(signals)).toEqual([
    { kind: "unknown", type: "assistant_delta" },
    { kind: "unknown", type: "stream_event content_block_text" },
  ]);
  expect(signals.filter((s) => s.kind !== "unknown")).toEqual(parse(captured));
});

it.runIf(locateCli("claude"))(
  "a real Claude Code's turn with a tool call says no type is unknown",
  async () => {
    await expectRealTurnSaysNoTypeUnknown(claudeCodeCase);
  },
);
