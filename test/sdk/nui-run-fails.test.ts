// The TypeScript nui SDK (sdk/ts/nui) when an agent's run fails with something other than an Error (a bare
// `reject()`, a thrown object): the run still ends with an error event saying what it failed with, its done and its
// reply, and the host serves on.
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { NuiAgent } from "../../sdk/ts/nui/index.js";

class Failing extends NuiAgent {
  override name = "failing";
  async *run(message: string) {
    yield "starting";
    if (message === "reject") await new Promise((_resolve, reject) => setImmediate(() => reject()));
    if (message === "object") throw { code: 429, retryAfter: 30 };
    yield "fine";
  }
}

describe("nui SDK: a run that fails with no Error", () => {
  it("ends with an error event naming what it failed with, and the host serves on", async () => {
    const input = new PassThrough();
    const output = new PassThrough();
    const lines: { id?: number; method?: string; params?: Record<string, unknown> }[] = [];
    let pending = "";
    output.on("data", (chunk: Buffer) => {
      pending += chunk.toString();
      for (let nl = pending.indexOf("\n"); nl >= 0; nl = pending.indexOf("\n")) {
        lines.push(JSON.parse(pending.slice(0, nl)));
        pending = pending.slice(nl + 1);
      }
    });
    void new Failing().serveStdio(input, output);
    const run = async (id: number, message: string) => {
      input.write(
        `${JSON.stringify({ jsonrpc: "2.0", id, method: "harness.run", params: { message, runId: `r${id}` } })}\n`,
      );
      await expect.poll(() => lines.some((l) => l.id === id)).toBe(true);
      return lines
        .filter((l) => l.method === "harness.event" && l.params?.runId === `r${id}`)
        .map((l) => l.params);
    };

    expect(await run(1, "reject")).toEqual([
      { runId: "r1", type: "text", content: "starting" },
      { runId: "r1", type: "error", error: "run() failed with undefined" },
      { runId: "r1", type: "done" },
    ]);
    expect((await run(2, "object"))[1]).toEqual({
      runId: "r2",
      type: "error",
      error: "run() failed with { code: 429, retryAfter: 30 }",
    });
    expect((await run(3, "go")).map((e) => e?.type)).toEqual(["text", "text", "done"]);
  });
});
