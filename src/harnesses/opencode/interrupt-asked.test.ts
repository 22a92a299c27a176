// An interrupt while opencode waits on Brain's answer to a permission request, on the real opencode: the turn
// settles interrupted and its call gets Brain's made-up result. opencode marks its own tool part aborted only as
// the next prompt starts it again, and that late `error` was logged in the next turn as a second tool.result of
// the last turn's call: a result in a turn that never made the call, which a client pairing calls with results
// (or a transcript, or a restore) met twice.
import { expect, it, vi } from "vitest";
import { events, waitForEvent } from "../../testing/brain.js";
import { type CliBed, cliBed } from "../../testing/cli.js";
import { locateCli } from "../cli/locate.js";
import { opencodeCase } from "./testing/case.js";

// opencode's 185 MB binary can take tens of seconds to start on a loaded machine.
vi.setConfig({ testTimeout: 400_000, hookTimeout: 60_000 });

it.runIf(locateCli("opencode"))(
  "a call interrupted while its permission is asked gets one result, in its own turn, and the next turn has none",
  async () => {
    let b: CliBed | undefined;
    try {
      b = await cliBed((launcher) => opencodeCase.factory({ launcher }), opencodeCase.provider);
      const session = await b.create({ permissions: { tools: { bash: "ask" } } });
      const asked = await session.prompt("Create a file CMD[touch never.txt]");
      await waitForEvent(session, (e) => e.type === "permission.requested");
      await session.interrupt();
      expect((await asked.settled).status).toBe("interrupted");
      const next = await session.prompt("NOTOOL after the interrupt");
      expect((await next.settled).status).toBe("completed");
      const all = await events(session);
      const tools = all.filter((e) => e.type === "tool.call" || e.type === "tool.result");
      expect(tools.map((e) => [e.type, e.turn])).toEqual([
        ["tool.call", asked.turn],
        ["tool.result", asked.turn],
      ]);
      expect(new Set(tools.map((e) => (e.data as { id: string }).id)).size).toBe(1);
    } finally {
      await b?.close();
    }
  },
);
