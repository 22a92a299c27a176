// A TCP host serves the sessions of every tenant on its harness. A thread an agent started in one session's run,
// emitting without naming a run, was taken for "the one run working": once that run had ended, whatever run was
// working then, another session's, got its text.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { events, textOf } from "../../testing/brain.js";
import { catalogFactories, useScratch, writeExtension } from "../../testing/nui.js";
import { installExtension } from "./install.js";

const { scratch, brain: scratchBrain } = useScratch();

// "a" ends at once and leaves a thread that, once "b" (another session's run) works, emits naming no run. "b" starts
// a thread of its own that does the same, and ends once both have emitted.
const HOST = `
import threading
from nui_agent import NuiAgent
go = threading.Event()
sent = threading.Event()
class Stray(NuiAgent):
    def run(self, message, run_id, **kwargs):
        if message == "a":
            def stray():
                go.wait(30)
                self.emit({"type": "text", "content": "session A's private text"})
                sent.set()
            threading.Thread(target=stray, daemon=True).start()
            yield "a"
            return
        go.set()
        sent.wait(30)
        own = threading.Thread(target=lambda: self.emit({"type": "text", "content": "b's worker, "}))
        own.start()
        own.join()
        yield "b"
Stray().serve()
`;

it("a thread an agent started in one session's run does not write into another session's run on a shared TCP host", async () => {
  const src = writeExtension(scratch("brain-ext-src-"), "stray", {
    transport: "tcp",
    command: ["python3", "host.py"],
  });
  writeFileSync(join(src, "host.py"), HOST);
  const home = scratch("brain-ext-home-");
  await installExtension(src, join(home, "extensions"));
  const { factories } = catalogFactories({ brainHome: home, hostHome: scratch("brain-ext-hosthome-") });
  const { brain } = scratchBrain({ factories, home });

  const a = await brain.create({ harness: "ext:stray/echo" });
  const first = await a.prompt("a");
  expect((await first.settled).status).toBe("completed");
  const b = await brain.create({ harness: "ext:stray/echo" });
  const second = await b.prompt("b");
  expect((await second.settled).status).toBe("completed");
  // The thread "b" started still names its run.
  expect(textOf(await events(b), second.turn)).toBe("b's worker, b");
  expect(textOf(await events(a))).toBe("a");
});
