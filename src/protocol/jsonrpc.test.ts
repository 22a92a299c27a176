// The one JSON-RPC peer: what codex app-server, nui's extension hosts and the nui SDK rely on.
import { describe, expect, it } from "vitest";
import { RpcError, RpcPeer, type RpcPeerOptions } from "./jsonrpc.js";

function peer(options: Partial<RpcPeerOptions> = {}) {
  const sent: Record<string, unknown>[] = [];
  const warnings: string[] = [];
  const notes: [string, unknown][] = [];
  const p = new RpcPeer((line) => sent.push(JSON.parse(line)), {
    onNotification: (method, params) => notes.push([method, params]),
    onWarning: (message) => warnings.push(message),
    ...options,
  });
  return { p, sent, warnings, notes };
}

describe("RpcPeer", () => {
  it("correlates answers by id (a string id too) and hands on notifications", async () => {
    const { p, sent, notes } = peer();
    const first = p.request("a", { x: 1 });
    const second = p.request("b", null);
    expect(sent).toEqual([
      { jsonrpc: "2.0", id: 1, method: "a", params: { x: 1 } },
      { jsonrpc: "2.0", id: 2, method: "b", params: null },
    ]);
    p.feed('{"jsonrpc":"2.0","id":"2","result":"two"}\n{"method":"ev","params":{"n":1}}\n{"id":1,');
    p.feed(Buffer.from('"result":"one"}\n'));
    expect(await first).toBe("one");
    expect(await second).toBe("two");
    expect(notes).toEqual([["ev", { n: 1 }]]);
  });

  it("rejects with an RpcError carrying the code, labelled when the peer has a label", async () => {
    const { p } = peer({ label: "codex", versionField: false });
    const call = p.request("turn/start", {});
    p.handle({ id: 1, error: { code: -32000, message: "no" } });
    await expect(call).rejects.toMatchObject({ code: -32000, message: 'codex: "turn/start" failed: no' });
    await expect(call).rejects.toBeInstanceOf(RpcError);
  });

  it("leaves out the jsonrpc field when asked, and times out with the error it is given", async () => {
    const { p, sent } = peer({ versionField: false, timeoutError: (method) => new Error(`late ${method}`) });
    await expect(p.request("slow", {}, 10)).rejects.toThrow("late slow");
    expect(sent[0]).toEqual({ id: 1, method: "slow", params: {} });
  });

  it("fails everything in flight when the stream goes, and every later request", async () => {
    const { p } = peer();
    const pending = p.request("a", {});
    p.fail(new Error("gone"));
    await expect(pending).rejects.toThrow("gone");
    await expect(p.request("b", {})).rejects.toThrow("gone");
  });

  it("refuses requests it has no handler for, and warns about lines that are not JSON-RPC", () => {
    const { p, sent, warnings } = peer({ who: "extension host" });
    p.feed('{"jsonrpc":"2.0","id":7,"method":"x"}\nhello\n{"id":99,"result":1}\n');
    expect(sent).toEqual([
      { jsonrpc: "2.0", id: 7, error: { code: -32601, message: 'method not found: "x"' } },
    ]);
    expect(warnings).toEqual([
      'extension host called "x", which is not served here',
      expect.stringMatching(/^extension host wrote a line that is not JSON-RPC \(not JSON/),
      "answer for unknown request id 99 ignored",
    ]);
  });

  it("hands requests to its handler when it has one", () => {
    const seen: unknown[] = [];
    const { p, sent } = peer({ onRequest: (id, method, params) => seen.push([id, method, params]) });
    p.feed('{"id":"r1","method":"approve","params":{"ok":true}}\n');
    expect(seen).toEqual([["r1", "approve", { ok: true }]]);
    expect(sent).toEqual([]);
  });
});
