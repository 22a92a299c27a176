// A TCP or HTTP host Brain started that dies mid-turn: the turn fails saying how the host ended (its exit code and the
// last of its stderr), as a stdio host's does, not only that its connection closed; the next turn starts it again.
import { join } from "node:path";
import { expect, it } from "vitest";
import { events, textOf } from "../../testing/brain.js";
import { catalogFactories, tsAgent, useScratch, writeExtension } from "../../testing/nui.js";
import { installExtension } from "./install.js";

const { pythonHost, scratch, brain } = useScratch();

const HOST = `
import os, sys, time
from nui_agent import NuiAgent
class Dies(NuiAgent):
    def run(self, message, run_id, **kwargs):
        yield "before "
        if message == "die":
            time.sleep(0.2)  # the text goes out before the host does
            sys.stderr.write("fatal: the model server went away\\n")
            sys.stderr.flush()
            os._exit(4)
        yield "alive"
Dies().serve()
`;

it("a TCP host Brain started that dies mid-turn fails the turn naming its exit and its stderr", async () => {
  const brain = await pythonHost("tcpdies", "tcp", HOST);
  const session = await brain.create({ harness: "ext:tcpdies/echo" });
  const turn = await session.prompt("die");
  const settled = await turn.settled;
  expect(settled.status).toBe("failed");
  expect(settled.error?.message).toMatch(
    /closed the connection: extension host for ext:tcpdies\/echo exited with code 4; its stderr ended with: [\s\S]*fatal: the model server went away$/,
  );
  expect(textOf(await events(session), turn.turn)).toBe("before ");
  const next = await session.prompt("again");
  expect((await next.settled).status).toBe("completed");
  expect(textOf(await events(session), next.turn)).toBe("before alive");
});

it("an HTTP host Brain started that dies mid-turn fails the turn naming its exit and its stderr", async () => {
  const src = writeExtension(scratch("brain-ext-src-"), "httpdies", {
    transport: "http",
    command: ["node", tsAgent, "http", "0"],
  });
  const home = scratch("brain-ext-home-");
  await installExtension(src, join(home, "extensions"));
  const { factories } = catalogFactories({ brainHome: home, hostHome: scratch("brain-ext-hosthome-") });
  const session = await brain({ factories, home }).brain.create({ harness: "ext:httpdies/echo" });
  const turn = await session.prompt("crash");
  const settled = await turn.settled;
  expect(settled.status).toBe("failed");
  expect(settled.error?.message).toMatch(
    /broke: .*: extension host for ext:httpdies\/echo exited with code 5; its stderr ended with: [\s\S]*ts agent: crashing on purpose$/,
  );
  expect((await (await session.prompt("again")).settled).status).toBe("completed");
});
