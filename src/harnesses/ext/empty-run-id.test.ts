// nui's seed gives harness.event no runId at all, and an SDK that tags its events writes "" from a thread that has
// no run of its own (nui's Python SDK's thread-local default): both mean the run working on that host.
import { expect, it } from "vitest";
import { events, textOf } from "../../testing/brain.js";
import { useScratch, warnings } from "../../testing/nui.js";

const { pythonHost } = useScratch();

const HOST = `
import threading
from nui_agent_stdio import NuiAgent
class Threads(NuiAgent):
    def run(self, message, run_id, **kwargs):
        def work():
            self._write({"jsonrpc": "2.0", "method": "harness.event",
                         "params": {"runId": "", "type": "text", "content": "from a thread; "}})
        worker = threading.Thread(target=work)
        worker.start()
        worker.join()
        yield "done"
Threads().serve_stdio()
`;

it("takes a harness.event whose runId is empty for the running run, as one with none", async () => {
  const brain = await pythonHost("threads", "stdio", HOST);
  const session = await brain.create({ harness: "ext:threads/echo" });
  const turn = await session.prompt("go");
  expect((await turn.settled).status).toBe("completed");
  const log = await events(session);
  expect(warnings(log)).toEqual([]);
  expect(textOf(log, turn.turn)).toBe("from a thread; done");
});
