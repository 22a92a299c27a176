// A Python SDK host that dies in the middle of a line, and one that floods stderr: Brain fails the turn saying
// why (the half line, the exit), keeps what came before, and does not hang; the flood never reaches the log.
import { expect, it } from "vitest";
import { events, textOf } from "../../testing/brain.js";
import { useScratch } from "../../testing/nui.js";

const { pythonHost } = useScratch();

const HOST = `
import os, sys
from nui_agent_stdio import NuiAgent
class Dies(NuiAgent):
    def run(self, message, run_id, **kwargs):
        if message == "flood":
            for _ in range(20000):
                sys.stderr.write("é😀 noise " * 20 + "\\n")
            yield "after the flood"
            return
        yield "before é😀"
        out = self._writer
        out('{"jsonrpc":"2.0","method":"harness.event","params":{"runId":"' + run_id + '","type":"text","content":"half é')
        os._exit(3)
Dies().serve_stdio()
`;

async function session() {
  const brain = await pythonHost("dies", "stdio", HOST);
  return brain.create({ harness: "ext:dies/echo" });
}

it("a Python host that dies mid-line fails the turn naming its exit, keeps the text before, and the next turn works", async () => {
  const s = await session();
  const turn = await s.prompt("die");
  const settled = await turn.settled;
  expect(settled.status).toBe("failed");
  expect(settled.error?.message).toMatch(
    /exited with code 3; its stdout .*middle of a frame \(\d+ bytes without a newline\)/,
  );
  const log = await events(s);
  expect(textOf(log, turn.turn)).toBe("before é😀");
  const next = await s.prompt("flood");
  expect((await next.settled).status).toBe("completed");
  const after = await events(s);
  expect(textOf(after, next.turn)).toBe("after the flood");
  expect(JSON.stringify(after)).not.toContain("noise");
});
