// Which opencode session a reopened harness continues: the one its state file records, unless opencode says it
// does not have it (404). Any other failure to look it up fails the start and keeps the record: a new session
// in its place would leave the conversation behind for good. The server is a stand-in for `opencode serve`
// whose lookup answers with the status a test chooses.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import type { PromptOutcome } from "../../core/harness.js";
import { tempDir } from "../../testing/brain.js";
import { bareHarnessOptions } from "../../testing/cli.js";
import { until } from "../../testing/processes.js";
import { OpencodeFactory } from "./factory.js";
import { STATE_FILE } from "./harness.js";

const SERVER = `#!/usr/bin/env node
const port = Number(process.argv[process.argv.indexOf("--port") + 1]);
require("node:http").createServer((req, res) => {
  if (req.url === "/event") {
    res.writeHead(200, { "content-type": "text/event-stream" });
    return res.write('data: {"type":"server.connected","properties":{}}\\n\\n');
  }
  if (req.method === "GET" && req.url.startsWith("/session/")) {
    if (process.env.LOOKUP_STATUS === "none") return; // taken, never answered
    res.writeHead(Number(process.env.LOOKUP_STATUS), { "content-type": "application/json" });
    return res.end('{"name":"UnknownError","data":{"message":"database is locked"}}');
  }
  if (req.method === "POST" && req.url === "/session") return res.end('{"id":"ses_new"}');
  // The health check; a prompt is taken and never answered.
  res.end("{}");
}).listen(port, "127.0.0.1", function () {
  console.log("opencode server listening on http://127.0.0.1:" + this.address().port);
});
`;

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/**
 * Opens a harness whose state records "ses_old", on a server whose lookup answers `status` ("none": never);
 * prompts once.
 */
async function promptWithLookup(
  status: number | "none",
  timeouts?: { startMs: number; interruptGraceMs: number },
): Promise<{
  turn: Promise<PromptOutcome>;
  state: () => unknown;
  close: () => Promise<void>;
  interrupt: () => Promise<void>;
}> {
  const dir = tempDir("brain-opencode-session-");
  dirs.push(dir);
  const bin = join(dir, "opencode");
  writeFileSync(bin, SERVER, { mode: 0o755 });
  const native = join(dir, "native");
  mkdirSync(native);
  writeFileSync(join(native, STATE_FILE), JSON.stringify({ session_id: "ses_old" }));
  const factory = new OpencodeFactory({
    bin,
    env: { LOOKUP_STATUS: String(status) },
    ...(timeouts ? { timeouts } : {}),
  });
  const harness = await factory.open(bareHarnessOptions(native));
  const turn = harness.prompt("hello", { turn: "t1", signal: new AbortController().signal });
  const state = () => JSON.parse(readFileSync(join(native, STATE_FILE), "utf8"));
  return {
    turn: turn.finally(() => harness.close()),
    state,
    close: () => harness.close(),
    interrupt: () => harness.interrupt("t1"),
  };
}

it("fails the start when opencode cannot look up the recorded session, keeping the record", async () => {
  const { turn, state } = await promptWithLookup(500);
  // Without the fix the turn runs on a new session instead: the test's timeout, not an assertion, catches it.
  await expect(turn).rejects.toThrow(
    'opencode: GET /session/ses_old answered HTTP 500: {"name":"UnknownError","data":{"message":"database is locked"}}',
  );
  expect(state()).toEqual({ session_id: "ses_old" });
});

it("starts a new session when opencode does not have the recorded one (404), and records it", async () => {
  const { turn, state, close } = await promptWithLookup(404);
  const closed = expect(turn).rejects.toThrow("opencode: the session closed");
  await until(() => (state() as { session_id: string }).session_id === "ses_new");
  await close();
  await closed;
});

// Without a deadline on its calls and an interrupt that reaches a program still starting, these two hung for
// good: the test's timeout, not an assertion, catches that.
it("ends an interrupted turn whose program is still starting", async () => {
  const { turn, interrupt } = await promptWithLookup("none", { startMs: 5_000, interruptGraceMs: 100 });
  await interrupt();
  expect(await turn).toEqual({ interrupted: true });
});

it("fails a turn whose program takes a call during its start and never answers it", async () => {
  const { turn } = await promptWithLookup("none", { startMs: 1_000, interruptGraceMs: 100 });
  await expect(turn).rejects.toThrow("opencode: GET /session/ses_old: no answer within 1 s");
});
