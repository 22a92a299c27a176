// A TCP host serves the sessions of every tenant on its harness. A thread an agent started in one session's run,
// emitting without naming a run, was taken for "the one run working": once that run had ended, whatever run was
// working then, another session's, got its text.
import { expect, it } from "vitest";
import { events, textOf } from "../../testing/brain.js";
import { asked, useScratch } from "../../testing/nui.js";

const { pythonHost } = useScratch();

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
  const brain = await pythonHost("stray", "tcp", HOST);

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

// As HOST, but the thread "a" leaves asks a question through NUI_API_URL once "b" works, and "b" says what came of it.
const ASKING_HOST = `
import threading
from nui_agent import NuiAgent
go = threading.Event()
done = threading.Event()
outcome = []
class Stray(NuiAgent):
    def run(self, message, run_id, **kwargs):
        if message == "a":
            def stray():
                go.wait(30)
                try:
                    self.ask_user(questions=[{"question": "session A's private question"}])
                    outcome.append("asked")
                except RuntimeError as err:
                    outcome.append(str(err))
                done.set()
            threading.Thread(target=stray, daemon=True).start()
            yield "a"
            return
        go.set()
        done.wait(30)
        yield outcome[0]
Stray().serve()
`;

it("a question naming neither session nor run from a host shared by sessions is refused, not asked in the one open session", async () => {
  const brain = await pythonHost("asking", "tcp", ASKING_HOST);
  const a = await brain.create({ harness: "ext:asking/echo" });
  expect((await (await a.prompt("a")).settled).status).toBe("completed");
  await brain.closeSession(a.id);
  const b = await brain.create({ harness: "ext:asking/echo" });
  const second = await b.prompt("b");
  const first = await Promise.race([
    second.settled.then(() => "settled"),
    asked(b).then((q) => `asked: ${JSON.stringify(q.data)}`),
  ]);
  expect(first).toBe("settled");
  expect(textOf(await events(b), second.turn)).toMatch(
    /^HITL POST \/api\/hitl\/requests failed \(404\): \{"error":"the request names neither a sessionId nor a runId and this host is shared by the sessions of ext:asking\/echo/,
  );
});
