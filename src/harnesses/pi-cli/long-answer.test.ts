// pi repeats the whole partial message in every `message_update` line, so a long answer, or a large file written
// through a tool call, comes as lines whose total grows with the square of its length. Brain must not decode them
// whole (on the daemon's event loop, shared by every session): what it hands the JSON decoder stays in proportion
// to what pi said. The program is a stand-in for `pi --mode rpc` writing such lines in pi's own shape.
import { afterEach, expect, it, vi } from "vitest";
import type { HarnessEvent } from "../../core/harness.js";
import { bareHarnessOptions, useStandIns } from "../../testing/cli.js";
import { PiCliFactory } from "./factory.js";

const PIECES = 500;
const PIECE = '"quoted" wörds, and more of them; ';

/** Answers a prompt with a streamed `write` call of a large file, then a long streamed answer. */
const PI = `#!/usr/bin/env node
const PIECES = ${PIECES}, PIECE = ${JSON.stringify(PIECE)};
const send = (m) => process.stdout.write(JSON.stringify(m) + "\\n");
const cost = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 };
const usage = { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost };
const msg = (content, stopReason = "stop") =>
  ({ role: "assistant", content, api: "openai-completions", provider: "fake", model: "fake-model", usage, stopReason });
const update = (event, content) =>
  send({ type: "message_update", assistantMessageEvent: { ...event, partial: msg(content) }, message: msg(content) });
function answer(id) {
  send({ id, type: "response", command: "prompt", success: true });
  send({ type: "agent_start" });
  let content = "";
  const call = () => ({ type: "toolCall", id: "call_1", name: "write", arguments: { path: "big.txt", content },
    partialArgs: '{"path":"big.txt","content":' + JSON.stringify(content).slice(0, -1) });
  update({ type: "toolcall_start", contentIndex: 0 }, [call()]);
  for (let i = 0; i < PIECES; i++) {
    content += PIECE;
    update({ type: "toolcall_delta", contentIndex: 0, delta: JSON.stringify(PIECE).slice(1, -1) }, [call()]);
  }
  const done = { type: "toolCall", id: "call_1", name: "write", arguments: { path: "big.txt", content } };
  update({ type: "toolcall_end", contentIndex: 0, toolCall: done }, [done]);
  send({ type: "message_end", message: msg([done], "toolUse") });
  send({ type: "tool_execution_start", toolCallId: "call_1", toolName: "write", args: done.arguments });
  const result = { content: [{ type: "text", text: "wrote big.txt" }] };
  send({ type: "tool_execution_end", toolCallId: "call_1", toolName: "write", result, isError: false });
  let text = "";
  update({ type: "text_start", contentIndex: 0 }, [{ type: "text", text }]);
  for (let i = 0; i < PIECES; i++) {
    text += PIECE;
    update({ type: "text_delta", contentIndex: 0, delta: PIECE }, [{ type: "text", text }]);
  }
  update({ type: "text_end", contentIndex: 0, content: text }, [{ type: "text", text }]);
  send({ type: "message_end", message: msg([{ type: "text", text }]) });
  send({ type: "agent_end" });
}
let buf = "";
process.stdin.on("data", (d) => {
  buf += d;
  for (let i; (i = buf.indexOf("\\n")) >= 0; buf = buf.slice(i + 1)) {
    const m = JSON.parse(buf.slice(0, i));
    if (m.type === "prompt") answer(m.id);
  }
});
process.stdin.on("end", () => process.exit(0));
`;

const standIns = useStandIns();
afterEach(() => {
  vi.restoreAllMocks();
});

it("decodes pi's streamed lines in proportion to what is new in them, not to the whole partial message", async () => {
  const { bin, native } = standIns.make("brain-pi-long-answer-", "pi", PI);
  const logged: HarnessEvent[] = [];
  const options = bareHarnessOptions(native);
  const harness = await new PiCliFactory({ bin }).open({ ...options, emit: (e) => logged.push(e) });
  const parse = vi.spyOn(JSON, "parse");
  try {
    const turn = harness.prompt("write a big file, then say a lot", {
      turn: "t1",
      signal: new AbortController().signal,
    });
    expect(await turn).toEqual({ interrupted: false });
  } finally {
    await harness.close();
  }
  const answer = PIECE.repeat(PIECES);
  const deltas = logged.flatMap((e) => (e.type === "assistant.delta" ? [e.data.text] : []));
  expect(deltas).toEqual(Array(PIECES).fill(PIECE));
  const messages = logged.flatMap((e) => (e.type === "assistant.message" ? [e.data.text] : []));
  expect(messages).toEqual(["", answer]);
  const call = logged.find((e) => e.type === "tool.call");
  expect(call?.data).toMatchObject({ name: "write", arguments: { path: "big.txt", content: answer } });
  // Decoded whole, the updates alone are some PIECES / 2 times the answer, twice over (file and text): here the
  // lines that carry the whole answer once or a few times (text_end, message_end, tool_execution_start) and the
  // deltas themselves.
  const decoded = parse.mock.calls.reduce((n, [text]) => n + String(text).length, 0);
  expect(decoded).toBeLessThan(16 * answer.length);
});
