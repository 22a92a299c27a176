// The data-loss check every CLI family passes on its real program: a session ran a tool turn, its native
// transcript was then removed, and after a host restart the next prompt must fail loudly (brain_error naming
// what is missing) without a model request, never quietly start the model with no history (issue 17).
import { rmSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { events } from "./brain.js";
import { agentRequests, type CliBed } from "./cli.js";
import type { CliFamilyTests } from "./cli-family.js";

export interface LostHistoryCase extends CliFamilyTests {
  harness: string;
  /** Paths (relative to the native dir) that hold the CLI's conversation: removed to lose it. */
  transcript: string[];
  /** How the family names its transcript in the message. */
  named: RegExp;
}

export function describeLostHistory(f: LostHistoryCase): void {
  describe.runIf(f.found)(`${f.harness}: a lost native transcript`, () => {
    it("fails the next turn loudly after a restart, with no model request", async () => {
      const b: CliBed = await f.start();
      const session = await b.create();
      expect((await (await session.prompt("List the files here")).settled).status).toBe("completed");
      // Lost while the host was down: a CLI still running could write its buffered lines back.
      const t = await b.restart();
      const native = t.store.paths(session.id).native;
      for (const path of f.transcript) rmSync(join(native, path), { recursive: true, force: true });
      const again = await t.brain.session(session.id);
      const before = agentRequests(b.sandbox.provider.requests).length;
      const next = await (await again.prompt("NOTOOL second")).settled;
      expect(next.status).toBe("failed");
      expect(next.error?.code).toBe("brain_error");
      expect(next.error?.message).toMatch(f.named);
      expect(next.error?.message).toMatch(/List the files here/);
      expect(next.error?.message).toContain(`brain sessions rebuild ${session.id}`);
      expect(agentRequests(b.sandbox.provider.requests)).toHaveLength(before);
      const settled = (await events(again)).filter((e) => e.type === "turn.settled");
      expect(settled.at(-1)?.data).toMatchObject({ status: "failed" });
    });
  });
}
