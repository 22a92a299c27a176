// How the CLI prints a session's text: what an agent, a tool or another client put there reaches the terminal as
// text, never as the terminal's own commands.
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import type { SessionEvent } from "../protocol/events.js";
import { jsonPrinter, textPrinter } from "./output.js";

const at = (seq: number, event: { type: SessionEvent["type"]; data: unknown }) =>
  ({ seq, ts: "t", session: "s", turn: "t1", ...event }) as SessionEvent;

function print(events: SessionEvent[]): { out: string; err: string } {
  const out = new PassThrough();
  const err = new PassThrough();
  textPrinter(out, err)(events);
  return { out: String(out.read() ?? ""), err: String(err.read() ?? "") };
}

describe("textPrinter", () => {
  it("writes control characters from the session as \\u escapes, keeping line breaks and tabs", () => {
    const clipboard = "\x1b]52;c;cm0gLXJmIH4=\x07";
    const { out, err } = print([
      at(1, { type: "assistant.delta", data: { text: `a${clipboard}b\x1b[2K\rc\r\n\td\u009b31m\n` } }),
      at(2, { type: "tool.call", data: { id: "1", name: "x\x1b[8m", arguments: {} } }),
      at(3, { type: "tool.result", data: { id: "1", content: [{ type: "text", text: "r\x1b[1A\x08" }] } }),
      at(4, { type: "harness.warning", data: { message: "w\x07" } }),
      at(5, {
        type: "turn.settled",
        data: { status: "failed", error: { code: "brain_error", message: "e\x1b" } },
      }),
    ]);
    expect(out).toBe("a\\u001b]52;c;cm0gLXJmIH4=\\u0007b\\u001b[2K\\u000dc\r\n\td\\u009b31m\n");
    expect(err).toBe(
      "[tool x\\u001b[8m {}]\n[tool result: r\\u001b[1A\\u0008]\n[warning: w\\u0007]\n[turn failed: brain_error: e\\u001b]\n",
    );
  });

  it("prints plain text as it is", () => {
    const text = "héllo 漢字 😀 — “quoted”\n\tindented\r\n";
    expect(print([at(1, { type: "assistant.delta", data: { text } })]).out).toBe(text);
  });
});

describe("jsonPrinter", () => {
  it("writes DEL, C1 controls and U+2028/9 as \\u escapes, as JSON.stringify writes C0 ones: the same JSON, one line", () => {
    const text = "a\u009b2Jb\x1b]52;c;aGk=\x07c\x7fd\u0085e — 漢字\u2028";
    const out = new PassThrough();
    jsonPrinter(out)([at(1, { type: "assistant.delta", data: { text } })]);
    const line = String(out.read());
    expect(line).not.toMatch(/[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029]/);
    expect(line).toContain("a\\u009b2Jb\\u001b]52");
    expect(JSON.parse(line)).toMatchObject({ data: { text } });
  });
});
