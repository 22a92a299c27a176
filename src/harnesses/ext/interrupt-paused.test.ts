// An interrupt while the read gate holds an extension host's output (the session's log behind: its fsync held by
// the test). The host stops at the cancel and answers, but its answer waits in the pipe (or socket) Brain is not
// reading: the interrupt's grace measures the host's silence, and while Brain does not listen the silence is
// Brain's. Giving up on the host then would blame it for a run it ended, and drop what it wrote before.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { testIO } from "../../store/fs/testing/fault-io.js";
import { blocked, FLOOD_EVENTS, FLOOD_PAD, floodText } from "../../testing/backlog.js";
import { events } from "../../testing/brain.js";
import { useScratch } from "../../testing/nui.js";
import { alive } from "../../testing/processes.js";

const { pythonHost, scratch } = useScratch();

/** The interrupt's grace: short enough to run out many times over while the test holds the log. */
const GRACE_MS = 400;

/**
 * A host that notes its pid in `dir`, then whose run yields FLOOD_EVENTS texts as fast as its output takes them,
 * noting in `progress` how many, and stops at a cancel (the SDK stops the run at its next yield); its on_cancel
 * writes `on_cancel` in `dir`.
 */
function stoppingHost(dir: string, sdk: string, serve: string): string {
  return `
import os
from ${sdk} import NuiAgent
open(${JSON.stringify(join(dir, "pid"))}, "w").write(str(os.getpid()))
class Flood(NuiAgent):
    def on_cancel(self, run_id):
        open(${JSON.stringify(join(dir, "on_cancel"))}, "w").write(run_id)
    def run(self, message, run_id, **kwargs):
        for i in range(${FLOOD_EVENTS}):
            yield "%06d" % i + "x" * ${FLOOD_PAD}
            if i % 16 == 15:
                with open(${JSON.stringify(join(dir, "progress"))}, "w") as f:
                    f.write(str(i + 1))
Flood().${serve}()
`;
}

function written(progress: string): number {
  return existsSync(progress) ? Number(readFileSync(progress, "utf8")) : 0;
}

describe.each([
  ["stdio", "nui_agent_stdio", "serve_stdio"],
  ["tcp", "nui_agent", "serve"],
] as const)(
  "an interrupt while the read gate holds an extension host's output over %s",
  (transport, sdk, serve) => {
    /** A flooding host's turn, its log's fsync held (`release` gives it back) once the host has written some. */
    async function floodHeld(prefix: string) {
      const dir = scratch(prefix);
      const progress = join(dir, "progress");
      const io = testIO();
      const brain = await pythonHost("flood", transport, stoppingHost(dir, sdk, serve), io, {
        interruptGraceMs: GRACE_MS,
      });
      const session = await brain.create({ harness: "ext:flood/echo" });
      const turn = await session.prompt("flood");
      await expect.poll(() => written(progress), { timeout: 30_000 }).toBeGreaterThan(0);
      return { dir, progress, session, turn, release: io.holdDurable() };
    }

    it("does not give up on a host whose answer waits unread: the turn ends as the host says, with all it wrote", async () => {
      const { dir, progress, session, turn, release } = await floodHeld("brain-ext-interrupt-");
      let interrupting: Promise<void> | undefined;
      try {
        await blocked(session, () => written(progress));
        const pid = Number(readFileSync(join(dir, "pid"), "utf8"));
        interrupting = session.interrupt();
        // The grace runs out ten times over while the log is held (the host was given up on at the first).
        await new Promise((resolve) => setTimeout(resolve, 10 * GRACE_MS));
        expect(alive(pid)).toBe(true);
      } finally {
        release();
      }
      await interrupting;
      expect((await turn.settled).status).toBe("interrupted");
      const all = await events(session);
      expect(all.filter((e) => e.type === "harness.warning").map((e) => e.data)).toEqual([]);
      // What the host wrote before it stopped is in the log, in order: a whole prefix of its flood.
      const text = all
        .filter((e) => e.type === "assistant.delta" && e.turn === turn.turn)
        .map((e) => (e.data as { text: string }).text)
        .join("");
      const count = text.length / (FLOOD_PAD + 6);
      expect(count).toBeLessThan(FLOOD_EVENTS);
      expect(text === Array.from({ length: count }, (_, i) => floodText(i)).join("")).toBe(true);
    }, 180_000);

    it("calls the agent's on_cancel while its output waits unread, not once Brain reads again", async () => {
      // The run's thread is blocked writing to a pipe (or socket) Brain does not read: the agent must still be told
      // at once to stop its work (a child, a model call), which goes on costing while Brain's log catches up.
      const { dir, progress, session, turn, release } = await floodHeld("brain-ext-oncancel-");
      let interrupting: Promise<void> | undefined;
      try {
        await blocked(session, () => written(progress));
        interrupting = session.interrupt();
        await expect.poll(() => existsSync(join(dir, "on_cancel")), { timeout: 60_000 }).toBe(true);
      } finally {
        release();
      }
      await interrupting;
      expect((await turn.settled).status).toBe("interrupted");
    }, 180_000);
  },
);
