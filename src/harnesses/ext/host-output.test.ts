// What a host sends that Brain cannot keep as it is: JSON.parse takes nesting that JSON.stringify (the log's
// writer) cannot give back. Such an event is skipped with a warning; the turn, the host and the daemon go on.
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { events, makeBrain, type TestBrain, tempDir, textOf } from "../../testing/brain.js";
import { catalogFactories, warnings, writeExtension } from "../../testing/nui.js";
import { installExtension } from "./install.js";

const cleanups: (() => void | Promise<void>)[] = [];
let t: TestBrain | undefined;
afterEach(async () => {
  await t?.cleanup();
  t = undefined;
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

function scratch(prefix: string): string {
  const dir = tempDir(prefix);
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

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
  const src = writeExtension(scratch("brain-ext-src-"), "deep", { command: ["python3", "host.py"] });
  writeFileSync(join(src, "host.py"), DEEP_HOST);
  const home = scratch("brain-ext-home-");
  await installExtension(src, join(home, "extensions"));
  const { factories } = catalogFactories({ brainHome: home, hostHome: scratch("brain-ext-hosthome-") });
  t = makeBrain({ factories, home });
  const session = await t.brain.create({ harness: "ext:deep/echo" });

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
