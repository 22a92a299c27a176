// An extension host that writes text events faster than the session's log can make them durable (its fsync held
// by the test): Brain stops reading the host's stdout (stdio) or connection (tcp) while the log is behind by more
// than BACKLOG_BYTES, so the host blocks on its own writes; once the disk comes back, every event arrives in order.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { BACKLOG_BYTES } from "../../core/backlog.js";
import { testIO } from "../../store/fs/testing/fault-io.js";
import { blocked, waiting } from "../../testing/backlog.js";
import { events } from "../../testing/brain.js";
import { useScratch } from "../../testing/nui.js";

const { pythonHost, scratch } = useScratch();

/** The host's flood: about four times the bound, in text events numbered in order. */
const [EVENTS, PAD] = [32 * 1024, 1000];
/** The most one read gives at once: what may be read past the bound before the check. */
const CHUNK = 64 * 1024;

const textOf = (i: number) => `${String(i).padStart(6, "0")}${"x".repeat(PAD)}`;

/** A host whose run yields EVENTS texts as fast as its output takes them, counting them in `progress`. */
function floodingHost(progress: string, sdk: string, serve: string): string {
  return `
from ${sdk} import NuiAgent
class Flood(NuiAgent):
    def run(self, message, run_id, **kwargs):
        for i in range(${EVENTS}):
            yield "%06d" % i + "x" * ${PAD}
            if i % 16 == 15:
                with open(${JSON.stringify(progress)}, "w") as f:
                    f.write(str(i + 1))
Flood().${serve}()
`;
}

function written(progress: string): number {
  try {
    return Number(readFileSync(progress, "utf8"));
  } catch {
    return 0;
  }
}

describe.each([
  ["stdio", "nui_agent_stdio", "serve_stdio"],
  ["tcp", "nui_agent", "serve"],
] as const)(
  "an extension host over %s flooding a session whose disk has fallen behind",
  (transport, sdk, serve) => {
    it("is not read past the bound: it blocks on its writes, and every event arrives in order once the disk is back", async () => {
      const progress = join(scratch("brain-ext-flood-"), "progress");
      const io = testIO();
      const brain = await pythonHost("flood", transport, floodingHost(progress, sdk, serve), io);
      const session = await brain.create({ harness: "ext:flood/echo" });
      const turn = await session.prompt("flood");
      await expect.poll(() => written(progress), { timeout: 30_000 }).toBeGreaterThan(0);
      const release = io.holdDurable();
      try {
        // Blocked: its count stands still across several polls while the log is behind by more than the bound.
        const last = await blocked(session, () => written(progress));
        expect(last).toBeLessThan(EVENTS);
        expect(waiting(session)).toBeLessThanOrEqual(BACKLOG_BYTES + CHUNK);
      } finally {
        release();
      }
      expect((await turn.settled).status).toBe("completed");
      const deltas = (await events(session)).filter(
        (e) => e.type === "assistant.delta" && e.turn === turn.turn,
      );
      const text = deltas.map((e) => (e.data as { text: string }).text).join("");
      expect(text.length).toBe(EVENTS * (PAD + 6));
      for (let i = 0; i < EVENTS; i++) {
        if (text.slice(i * (PAD + 6), (i + 1) * (PAD + 6)) !== textOf(i))
          expect.fail(`event ${i} is not in its place`);
      }
    }, 180_000);
  },
);

describe("an extension host over stdio that dies while Brain is not reading it", () => {
  it("has what it left in its pipe read to the end, though the disk is still behind", async () => {
    const dir = scratch("brain-ext-flood-exit-");
    const [progress, pid] = [join(dir, "progress"), join(dir, "pid")];
    const io = testIO();
    const host = floodingHost(progress, "nui_agent_stdio", "serve_stdio").replace(
      "class Flood",
      `import os\nopen(${JSON.stringify(pid)}, "w").write(str(os.getpid()))\nclass Flood`,
    );
    const brain = await pythonHost("flood", "stdio", host, io);
    const session = await brain.create({ harness: "ext:flood/echo" });
    await session.prompt("flood");
    await expect.poll(() => written(progress), { timeout: 30_000 }).toBeGreaterThan(0);
    const release = io.holdDurable();
    try {
      // Paused and blocked: the host's count stands still while the log is past the bound.
      await blocked(session, () => written(progress));
      const held = waiting(session);
      // Killed while blocked: the frames already in its pipe (a pipe holds 64 KiB, dozens of them) are its last
      // words. They are read once it is gone, before Brain lets go of its pipe (EXIT_DRAIN_MS), though the log is
      // as far behind as it was: far more than the turn's failure alone (an error and the stderr tail) adds.
      process.kill(Number(readFileSync(pid, "utf8")), "SIGKILL");
      await expect.poll(() => waiting(session), { timeout: 30_000 }).toBeGreaterThan(held + 16 * 1024);
    } finally {
      release();
    }
  }, 180_000);
});
