// A permission request pending in a real CLI's turn (Claude Code, Codex) when a client interrupts it: the request
// ends denied, saying the turn was interrupted, the CLI is told and its turn ends, an answer after is refused,
// nothing runs, and the next turn works. These CLIs cancel their tools only once they have taken the interrupt
// (Harness.cancelsToolsAfterInterrupt), and Codex ends its turn before that: its request read "the turn ended".
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { events, waitForEvent } from "../../testing/brain.js";
import { type CliBed, cliBed } from "../../testing/cli.js";
import type { CliFamilyCase } from "../../testing/cli-family.js";
import { claudeCodeCase } from "../claude-code/testing/case.js";
import { codexCase } from "../codex/testing/case.js";
import { locateCli } from "./locate.js";

// Real CLIs start slowly on a loaded machine.
vi.setConfig({ testTimeout: 180_000, hookTimeout: 60_000 });

let bed: CliBed | undefined;
afterEach(async () => {
  await bed?.close();
  bed = undefined;
});

for (const f of [claudeCodeCase, codexCase] as CliFamilyCase[]) {
  describe.runIf(locateCli(f.program))(`${f.harness} on the real CLI`, () => {
    it("ends a permission request pending when the turn is interrupted, as interrupted", async () => {
      bed = await cliBed((launcher) => f.factory({ launcher }), f.provider);
      const session = await bed.create({ permissions: { tools: { [f.shellTool!]: "ask" } } });
      const turn = await session.prompt("Create a file CMD[touch asked.txt]");
      const asked = await waitForEvent(session, (e) => e.type === "permission.requested");
      const id = (asked.data as { id: string }).id;
      await session.interrupt();
      expect((await turn.settled).status).toBe("interrupted");
      const resolved = (await events(session)).filter((e) => e.type === "permission.resolved");
      expect(resolved.map((e) => e.data)).toEqual([
        { id, decision: "deny", reason: "the turn was interrupted", unanswered: "cancelled" },
      ]);
      await expect(session.reply(id, { decision: "allow" })).rejects.toThrow(/no pending permission request/);
      expect((await (await session.prompt("NOTOOL again")).settled).status).toBe("completed");
      expect(existsSync(join(bed.t.store.paths(session.id).native, "work", "asked.txt"))).toBe(false);
    });
  });
}
