// Events a host sends for a run that has ended belong to no run. Only a stdio host was given a run id of its own
// (NUI_RUN_ID, which nui's SDK keeps putting in later runs' HITL requests, and only there); a TCP host was never
// told one, so the first run on a connection is as over as any other once it ended.
import { expect, it } from "vitest";
import { events, textOf } from "../../testing/brain.js";
import { useScratch, warnings } from "../../testing/nui.js";

const { pythonHost } = useScratch();

// "early" ends at once and leaves a thread that, once the next run has begun, sends text and an error for it; the
// next run ends once they are sent. TRANSPORT, set before it, is its transport.
const LATE_HOST = `
import threading
if TRANSPORT == "tcp":
    from nui_agent import NuiAgent
else:
    from nui_agent_stdio import NuiAgent
class Late(NuiAgent):
    started = threading.Event()
    sent = threading.Event()
    def run(self, message, run_id, **kwargs):
        if message == "early":
            conn = getattr(self._local(), "conn", None)
            def late():
                Late.started.wait(30)
                if conn is not None:
                    self._local().conn = conn  # a TCP host writes on the run's connection
                self.emit({"type": "text", "content": "late text of the first run"}, run_id)
                self.emit({"type": "error", "error": "late error of the first run"}, run_id)
                Late.sent.set()
            threading.Thread(target=late, daemon=True).start()
            yield "first"
            return
        Late.started.set()
        Late.sent.wait(30)
        yield "second"
Late().serve() if TRANSPORT == "tcp" else Late().serve_stdio()
`;

async function lateHost(transport: "tcp" | "stdio") {
  const brain = await pythonHost("late", transport, `TRANSPORT = "${transport}"\n${LATE_HOST}`);
  return brain.create({ harness: "ext:late/echo" });
}

it.each([
  ["TCP", "tcp"],
  ["stdio", "stdio"],
] as const)(
  "a %s host's text and error for its first run, sent after it ended, do not reach the next run",
  async (_, transport) => {
    const session = await lateHost(transport);
    const first = await session.prompt("early");
    expect((await first.settled).status).toBe("completed");
    const second = await session.prompt("next");
    expect(await second.settled).toEqual({ turn: second.turn, status: "completed" });
    const log = await events(session);
    expect(textOf(log, second.turn)).toBe("second");
    const ignored = warnings(log).filter((w) => w.startsWith("harness.event"));
    // A stdio host's first run has the id it was started with: the warning says why that no longer counts.
    const stale = (type: string) =>
      expect.stringMatching(
        new RegExp(
          `^harness\\.event "${type}" for run "run-[\\w-]+", the run the host was started for, which has ended: only a hitl_request may name it after that run; ignored$`,
        ),
      );
    expect(ignored).toEqual(
      transport === "stdio"
        ? [stale("text"), stale("error")]
        : [expect.stringMatching(/^harness\.event for run "run-[\w-]+", which is not running; ignored$/)],
    );
  },
);
