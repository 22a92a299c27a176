// The TypeScript nui SDK (sdk/ts/nui) when an agent's own hooks throw: the run still ends with its done and its
// reply, and the host serves on, as the Python SDK does.
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { NuiAgent } from "../../sdk/ts/nui/index.js";

class Faulty extends NuiAgent {
  override name = "faulty";
  async *run(_message: string, _runId: string, ctx: { signal: AbortSignal }) {
    yield "ok";
    await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve, { once: true }));
  }
  override getSessionId(): string {
    throw new Error("no session yet");
  }
  override onCancel(): void {
    throw new Error("cleanup failed");
  }
}

/** Serves `agent` over in-memory stdio; `reply(id)` resolves with the response to request `id`. */
function serve(agent: NuiAgent) {
  const input = new PassThrough();
  const output = new PassThrough();
  const lines: Record<string, unknown>[] = [];
  const waiting = new Map<number, (line: Record<string, unknown>) => void>();
  let pending = "";
  output.on("data", (chunk: Buffer) => {
    pending += chunk.toString();
    for (let nl = pending.indexOf("\n"); nl >= 0; nl = pending.indexOf("\n")) {
      const line = JSON.parse(pending.slice(0, nl)) as Record<string, unknown>;
      pending = pending.slice(nl + 1);
      lines.push(line);
      if (typeof line.id === "number") waiting.get(line.id)?.(line);
    }
  });
  void agent.serveStdio(input, output);
  let nextId = 0;
  return {
    lines,
    request(method: string, params: Record<string, unknown>) {
      const id = ++nextId;
      const answered = new Promise<Record<string, unknown>>((resolve) => waiting.set(id, resolve));
      input.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`);
      return answered;
    },
  };
}

describe("nui SDK: hooks that throw", () => {
  it("end the run all the same, answer the cancel, and say on stderr what failed", async () => {
    const stderr: string[] = [];
    const write = process.stderr.write;
    process.stderr.write = ((text: string) => stderr.push(text) > 0) as typeof process.stderr.write;
    try {
      const host = serve(new Faulty());
      const running = host.request("harness.run", { message: "m", runId: "r1" });
      // Cancelled while it works: onCancel is called for a run under way.
      await expect.poll(() => host.lines.some((l) => l.method === "harness.event")).toBe(true);
      expect(await host.request("harness.cancel", { runId: "r1" })).toMatchObject({ result: { ok: true } });
      expect(await running).toMatchObject({ result: { runId: "r1", cancelled: true } });
      const events = host.lines.filter((l) => l.method === "harness.event").map((l) => l.params);
      expect(events).toEqual([
        { runId: "r1", type: "text", content: "ok" },
        { runId: "r1", type: "done" },
      ]);
      expect(await host.request("harness.info", {})).toMatchObject({ result: { name: "faulty" } });
    } finally {
      process.stderr.write = write;
    }
    expect(stderr.join("")).toContain("[faulty] getSessionId failed: Error: no session yet");
    expect(stderr.join("")).toContain("[faulty] onCancel failed: Error: cleanup failed");
  });
});
