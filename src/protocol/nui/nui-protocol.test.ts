// Decoding what third-party nui hosts send: the documented shapes (docs/protocol.md#harness-events), nui Go's older spellings, lenient on the rest.
import { describe, expect, it } from "vitest";
import { connectionId } from "./connection.js";
import { decodeHarnessEvent } from "./harness-event.js";
import { decodeRpcLine } from "./jsonrpc.js";

describe("harness events", () => {
  it.each([
    [
      { type: "text", content: "hi", runId: "r", extra: 1 },
      { type: "text", content: "hi" },
    ],
    [{ type: "done" }, { type: "done" }],
    [
      { type: "done", sessionId: "s" },
      { type: "done", sessionId: "s" },
    ],
    [
      { type: "error", error: "boom" },
      { type: "error", error: "boom" },
    ],
    [
      { type: "tool_call", toolCallId: "c", name: "n", args: { a: 1 } },
      { type: "tool_call", toolCallId: "c", name: "n", args: { a: 1 } },
    ],
    [
      { type: "tool_call", toolCallId: "c", name: "n" },
      { type: "tool_call", toolCallId: "c", name: "n", args: {} },
    ],
    [
      { type: "tool_call", toolCallId: "c", name: "n", args: "[1]" },
      { type: "tool_call", toolCallId: "c", name: "n", args: { value: "[1]" } },
    ],
    [
      { type: "tool_result", toolCallId: "c", content: { n: 2 }, isError: true },
      { type: "tool_result", toolCallId: "c", content: '{"n":2}', isError: true },
    ],
    [
      { type: "hitl_request", request_id: "q", payload: { a: 1 } },
      { type: "hitl_request", requestId: "q", kind: "question", payload: { a: 1 } },
    ],
    [
      { type: "image", mimeType: "image/png", data: "AA==" },
      { type: "image", mimeType: "image/png", data: "AA==" },
    ],
    [
      { type: "tool_call_end", toolCallId: "c", toolName: "grep", toolArgs: '{"q":1}' },
      { type: "tool_call", toolCallId: "c", name: "grep", args: { q: 1 } },
    ],
    [
      { type: "tool_call_result", toolCallId: "c", content: "ok" },
      { type: "tool_result", toolCallId: "c", content: "ok", isError: false },
    ],
  ])("%j", (raw, event) => {
    expect(decodeHarnessEvent(raw)).toEqual({ ok: true, event });
  });

  it.each([
    [[], /a JSON object/],
    [{ content: "x" }, /needs a string "type"/],
    [{ type: "thinking" }, /unknown harness event type "thinking" skipped/],
    [{ type: "text", content: 5 }, /"text" event skipped: content: /],
    [{ type: "hitl_request" }, /"hitl_request" event skipped: requestId/],
  ])("skips %j with a reason", (raw, reason) => {
    const decoded = decodeHarnessEvent(raw);
    expect(decoded.ok).toBe(false);
    if (!decoded.ok) expect(decoded.reason).toMatch(reason);
  });

  // JSON.parse takes nesting JSON.stringify cannot give back; a throw here ended the daemon.
  const deep = JSON.parse(`${"[".repeat(200_000)}1${"]".repeat(200_000)}`) as unknown;
  it.each([
    [
      { type: "tool_result", toolCallId: "c", content: { a: deep } },
      /"tool_result" event skipped: its content cannot/,
    ],
    [
      { type: "tool_call", toolCallId: "c", name: "n", args: { a: deep } },
      /"tool_call" event skipped: its args cannot/,
    ],
    [
      {
        type: "tool_call",
        toolCallId: "c",
        name: "n",
        args: `{"a":${"[".repeat(200_000)}${"]".repeat(200_000)}}`,
      },
      /"tool_call" event skipped: its args cannot/,
    ],
    [
      { type: "hitl_request", requestId: "q", payload: { a: deep } },
      /"hitl_request" event skipped: its payload/,
    ],
  ])("never throws, skipping what nests too deep to be logged (%#)", (raw, reason) => {
    const decoded = decodeHarnessEvent(raw);
    expect(decoded.ok).toBe(false);
    if (!decoded.ok) expect(decoded.reason).toMatch(reason);
  });
});

describe("JSON-RPC lines", () => {
  it("tells responses, notifications and requests apart, and explains what is none of them", () => {
    expect(decodeRpcLine('{"jsonrpc":"2.0","id":3,"result":{"ok":true}}')).toEqual({
      ok: true,
      message: { kind: "response", id: 3, result: { ok: true } },
    });
    expect(decodeRpcLine('{"id":"4","error":{"code":-32601,"message":"nope"}}')).toMatchObject({
      message: { kind: "response", id: "4", error: { code: -32601, message: "nope" } },
    });
    expect(decodeRpcLine('{"method":"harness.event","params":{"type":"done"}}')).toEqual({
      ok: true,
      message: { kind: "notification", method: "harness.event", params: { type: "done" } },
    });
    expect(decodeRpcLine('{"method":"x","id":1}')).toMatchObject({
      message: { kind: "request", id: 1, method: "x" },
    });
    expect(decodeRpcLine("hello")).toMatchObject({ ok: false, reason: expect.stringMatching(/^not JSON/) });
    expect(decodeRpcLine('{"foo":1}')).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/has "method", "result" or "error"/),
    });
  });
});

it("derives connection ids as nui does", () => {
  expect(connectionId("ext:corp-pack/echo")).toBe("ext-corp-pack-echo");
  expect(connectionId("  ")).toBe("harness");
});
