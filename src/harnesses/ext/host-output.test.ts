// What a host writes that is not the protocol's plain fare: events JSON.parse takes but JSON.stringify (the log's
// writer) cannot give back, skipped with a warning; a shared host's stdout, which carries no protocol. The turn,
// the host and the daemon go on.
import { expect, it } from "vitest";
import { events, textOf } from "../../testing/brain.js";
import { useScratch, warnings } from "../../testing/nui.js";

const { pythonHost } = useScratch();

// Its tool call's arguments and its tool result nest 100k arrays deep, written as raw lines.
const DEEP_HOST = `
import json
from nui_agent_stdio import NuiAgent
DEEP = "[" * 100000 + "1" + "]" * 100000
class Deep(NuiAgent):
    def run(self, message, run_id, **kwargs):
        head = '{"jsonrpc":"2.0","method":"harness.event","params":{"runId":%s,' % json.dumps(run_id)
        with self._lock():
            self._writer(head + '"type":"tool_call","toolCallId":"c1","name":"fetch","args":{"a":%s}}}\\n' % DEEP)
            self._writer(head + '"type":"tool_result","toolCallId":"c1","content":{"a":%s}}}\\n' % DEEP)
        yield "still here: " + message
Deep().serve_stdio()
`;

it("skips a tool call and a tool result nested too deep to be logged, and the session goes on", async () => {
  const brain = await pythonHost("deep", "stdio", DEEP_HOST);
  const session = await brain.create({ harness: "ext:deep/echo" });

  for (const prompt of ["one", "two"]) {
    const turn = await session.prompt(prompt);
    expect((await turn.settled).status).toBe("completed");
    expect(textOf(await events(session), turn.turn)).toBe(`still here: ${prompt}`);
  }
  expect(warnings(await events(session))).toEqual(
    expect.arrayContaining([
      expect.stringMatching(/"tool_call" event skipped: its args cannot be written as JSON/),
      expect.stringMatching(/"tool_result" event skipped: its content cannot be written as JSON/),
    ]),
  );
});

// Prints far more than a pipe holds (64 KiB) to a stdout nobody reads for the protocol.
const CHATTY_TCP_HOST = `
from nui_agent import NuiAgent
class Chatty(NuiAgent):
    def run(self, message, run_id, **kwargs):
        for i in range(4000):
            print("debug line %d %s" % (i, "x" * 100), flush=True)
        yield "printed: " + message
Chatty().serve()
`;

it("a tcp host Brain started may print to its stdout as much as it likes", async () => {
  const brain = await pythonHost("chatty", "tcp", CHATTY_TCP_HOST);
  const session = await brain.create({ harness: "ext:chatty/echo" });
  const turn = await session.prompt("hi");
  expect((await turn.settled).status).toBe("completed");
  expect(textOf(await events(session), turn.turn)).toBe("printed: hi");
});

// Each event names something different and long: 200 unknown types and 200 results for calls never made.
const VARIED_HOST = `
from nui_agent_stdio import NuiAgent
class Varied(NuiAgent):
    def run(self, message, run_id, **kwargs):
        for i in range(200):
            self.emit({"type": "kind-%d-%s" % (i, "t" * 65536)})
            self.emit({"type": "tool_result", "toolCallId": "call-%d-%s" % (i, "c" * 65536), "content": "x"})
        yield "still here: " + message
Varied().serve_stdio()
`;

it("logs a few short warnings for a run's many different bad events, not one as long as each of them", async () => {
  const brain = await pythonHost("varied", "stdio", VARIED_HOST);
  const session = await brain.create({ harness: "ext:varied/echo" });
  const turn = await session.prompt("hi");
  expect((await turn.settled).status).toBe("completed");
  const log = await events(session);
  expect(textOf(log, turn.turn)).toBe("still here: hi");
  const said = warnings(log);
  expect(said.length).toBeLessThanOrEqual(21);
  expect(said.at(-1)).toMatch(/ext:varied\/echo: \d+ more warnings like the ones above, not logged/);
  expect(said).toEqual(
    expect.arrayContaining([expect.stringMatching(/^unknown harness event type "kind-0-t+…" skipped$/)]),
  );
  for (const message of said) expect(message.length).toBeLessThan(1000);
});

// Prints where nui's REST API is, as a failing HTTP client's traceback would, then dies in the middle of a run.
const LEAKY_HOST = `
import os, sys
from nui_agent_stdio import NuiAgent
class Leaky(NuiAgent):
    def run(self, message, run_id, **kwargs):
        yield "before"
        sys.stderr.write("could not reach %s/api/hitl/requests\\n" % os.environ["NUI_API_URL"])
        sys.stderr.flush()
        os._exit(3)
Leaky().serve_stdio()
`;

it("a host's stderr in a turn's error never carries the secret path of its NUI_API_URL", async () => {
  const brain = await pythonHost("leaky", "stdio", LEAKY_HOST);
  const session = await brain.create({ harness: "ext:leaky/echo" });
  const turn = await session.prompt("hi");
  expect((await turn.settled).status).toBe("failed");
  const logged = JSON.stringify(await events(session));
  expect(logged).toMatch(
    /exited with code 3; its stderr ended with: could not reach http:\/\/127\.0\.0\.1:\d+\//,
  );
  expect(logged).not.toMatch(/127\.0\.0\.1:\d+\/[A-Za-z0-9_-]{20,}/);
  expect(logged).toMatch(/127\.0\.0\.1:\d+\/\[redacted:NUI_API_URL token\]\/api\/hitl/);
});

// Writes "é" (two bytes in UTF-8) one byte at a time, each read on its own, then dies in the middle of a run.
const SPLIT_CHAR_HOST = `
import os, sys, time
from nui_agent_stdio import NuiAgent
class Split(NuiAgent):
    def run(self, message, run_id, **kwargs):
        yield "before"
        sys.stderr.buffer.write(b"fatal: caf\\xc3")
        sys.stderr.buffer.flush()
        time.sleep(0.3)
        sys.stderr.buffer.write(b"\\xa9 closed\\n")
        sys.stderr.buffer.flush()
        os._exit(3)
Split().serve_stdio()
`;

it("a host's stderr in a turn's error keeps a character its pipe gave in two reads", async () => {
  const brain = await pythonHost("split", "stdio", SPLIT_CHAR_HOST);
  const session = await brain.create({ harness: "ext:split/echo" });
  const settled = await (await session.prompt("hi")).settled;
  expect(settled.status).toBe("failed");
  expect(settled.error?.message).toMatch(/its stderr ended with: fatal: café closed$/);
});
