// The TypeScript nui SDK's onCancel, on a host that serves several connections (TCP: each another session's, another
// tenant's perhaps): it is called for a cancel of the connection's own run under way only, as the Python SDK's. The
// agent knows a run by its id alone, so another connection's cancel of an id this one runs would stop its work.
import { describe, expect, it } from "vitest";
import { NuiAgent } from "../../sdk/ts/nui/index.js";
import { RpcConnection } from "../../sdk/ts/nui/rpc.js";

class Noting extends NuiAgent {
  override name = "noting";
  readonly cancelled: string[] = [];
  async *run(_message: string, _runId: string, ctx: { signal: AbortSignal }) {
    await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve, { once: true }));
    yield "stopped";
  }
  override onCancel(runId: string): void {
    this.cancelled.push(runId);
  }
}

/** One connection of `agent`'s host; `reply(id)` resolves with the answer to request `id`. */
function connect(agent: NuiAgent) {
  const waiting = new Map<number, (line: Record<string, unknown>) => void>();
  const conn = new RpcConnection(
    agent,
    (text) => {
      for (const line of text.split("\n").filter(Boolean)) {
        const msg = JSON.parse(line) as Record<string, unknown>;
        if (typeof msg.id === "number") waiting.get(msg.id)?.(msg);
      }
    },
    () => {},
  );
  return (id: number, method: string, params: Record<string, unknown>) => {
    const answered = new Promise<Record<string, unknown>>((resolve) => waiting.set(id, resolve));
    conn.feed(`${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`);
    return answered;
  };
}

describe("nui SDK: onCancel with two connections", () => {
  it("is called for the connection's own run under way, not for another connection's cancel of its id", async () => {
    const agent = new Noting();
    const a = connect(agent);
    const b = connect(agent);
    const running = a(1, "harness.run", { message: "m", runId: "r1" });
    expect(await b(1, "harness.cancel", { runId: "r1" })).toMatchObject({ result: { ok: true } });
    expect(agent.cancelled).toEqual([]);
    expect(await a(2, "harness.cancel", { runId: "r1" })).toMatchObject({ result: { ok: true } });
    expect(await running).toMatchObject({ result: { runId: "r1", cancelled: true } });
    expect(agent.cancelled).toEqual(["r1"]);
  });
});
