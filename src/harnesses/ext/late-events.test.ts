// Events a host sends for a run that has ended belong to no run. Only a stdio host was given a run id of its own
// (NUI_RUN_ID, which nui's SDK keeps putting in later runs' events); a TCP host was never told one, so the first
// run on a connection is as over as any other once it ended, and what is sent for it later is not the running run's.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { events, textOf } from "../../testing/brain.js";
import { catalogFactories, useScratch, warnings, writeExtension } from "../../testing/nui.js";
import { installExtension } from "./install.js";

const { scratch, brain: scratchBrain } = useScratch();

// "early" ends at once and leaves a thread that, once the next run has begun, sends text and an error for it; the
// next run ends once they are sent.
const LATE_HOST = `
import threading
from nui_agent import NuiAgent
class Late(NuiAgent):
    started = threading.Event()
    sent = threading.Event()
    def run(self, message, run_id, **kwargs):
        if message == "early":
            writer = self._local().writer
            def late():
                Late.started.wait(30)
                self._local().writer = writer
                self.emit({"type": "text", "content": "late text of the first run"}, run_id)
                self.emit({"type": "error", "error": "late error of the first run"}, run_id)
                Late.sent.set()
            threading.Thread(target=late, daemon=True).start()
            yield "first"
            return
        Late.started.set()
        Late.sent.wait(30)
        yield "second"
Late().serve()
`;

it("a TCP host's events for the connection's first run, sent after it ended, do not reach the next run", async () => {
  const src = writeExtension(scratch("brain-ext-src-"), "late", {
    transport: "tcp",
    command: ["python3", "host.py"],
  });
  writeFileSync(join(src, "host.py"), LATE_HOST);
  const home = scratch("brain-ext-home-");
  await installExtension(src, join(home, "extensions"));
  const { factories } = catalogFactories({ brainHome: home, hostHome: scratch("brain-ext-hosthome-") });
  const { brain } = scratchBrain({ factories, home });
  const session = await brain.create({ harness: "ext:late/echo" });
  const first = await session.prompt("early");
  expect((await first.settled).status).toBe("completed");
  const second = await session.prompt("next");
  expect(await second.settled).toEqual({ turn: second.turn, status: "completed" });
  const log = await events(session);
  expect(textOf(log, second.turn)).toBe("second");
  expect(warnings(log)).toEqual(
    expect.arrayContaining([
      expect.stringMatching(/^harness\.event for run "run-[\w-]+", which is not running; ignored/),
    ]),
  );
});
