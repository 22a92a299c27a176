// A Python stdio host whose agent prints without a newline before serve_stdio() starts (at import): Brain starts
// hosts with PYTHONUNBUFFERED=1, so the text reached the pipe at once and ran into the host's first protocol line,
// which Brain dropped as not JSON-RPC. The SDK starts its stream with a newline (nui_wire.protocol_stdout).
import { expect, it } from "vitest";
import { events, textOf } from "../../testing/brain.js";
import { useScratch } from "../../testing/nui.js";

const { pythonHost } = useScratch();

const HOST = `
print("printed at import, no newline", end="")
from nui_agent_stdio import NuiAgent
class Early(NuiAgent):
    def run(self, message, run_id, **kwargs):
        yield "ok"
Early().serve_stdio()
`;

it("serves a host whose agent printed without a newline before serving: its first protocol line arrives whole", async () => {
  const brain = await pythonHost("early", "stdio", HOST);
  const session = await brain.create({ harness: "ext:early/echo" });
  const turn = await session.prompt("go");
  expect((await turn.settled).status).toBe("completed");
  expect(textOf(await events(session), turn.turn)).toBe("ok");
});
