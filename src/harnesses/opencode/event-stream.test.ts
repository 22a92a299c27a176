// opencode's server whose event stream ends while it runs on: Brain hears nothing more of the session from it,
// so the turn fails and the next prompt starts a new server. The old one must not be left running (with the
// session's database open) unowned. The program is a stand-in for `opencode serve` that ends its event stream
// at the first prompt, since the real one does not let go of it.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { bareHarnessOptions, useStandIns } from "../../testing/cli.js";
import { alive, until } from "../../testing/processes.js";
import { OpencodeFactory } from "./factory.js";

/** Health, the event stream (ended at the first prompt), a new session; writes its pid. */
const SERVE = `#!/usr/bin/env node
const { createServer } = require("node:http");
require("node:fs").writeFileSync(process.env.PID_FILE, String(process.pid));
const port = Number(process.argv[process.argv.indexOf("--port") + 1]);
let events;
createServer((req, res) => {
  if (req.url === "/event") {
    res.writeHead(200, { "content-type": "text/event-stream" });
    events = res;
    return res.write('data: {"type":"server.connected","properties":{}}\\n\\n');
  }
  if (req.url.endsWith("/prompt_async")) {
    res.writeHead(204).end();
    return events.end();
  }
  res.end(req.method === "POST" && req.url === "/session" ? '{"id":"ses_1"}' : "{}");
}).listen(port, "127.0.0.1", function () {
  console.log("opencode server listening on http://127.0.0.1:" + this.address().port);
});
`;

const { make, pids } = useStandIns();

it("stops a server whose event stream ended, instead of leaving it running unowned", async () => {
  const { dir, bin, native } = make("brain-opencode-events-", "opencode", SERVE);
  const pidFile = join(dir, "pid");
  const harness = await new OpencodeFactory({ bin, env: { PID_FILE: pidFile } }).open(
    bareHarnessOptions(native),
  );
  try {
    const turn = harness.prompt("hello", { turn: "t1", signal: new AbortController().signal });
    await expect(turn).rejects.toThrow(/opencode: the server closed its event stream/);
    await until(() => existsSync(pidFile) && readFileSync(pidFile, "utf8") !== "");
    const pid = Number(readFileSync(pidFile, "utf8"));
    pids.push(pid);
    // Without the fix the server runs on: the test's timeout, not an assertion, catches it.
    await until(() => !alive(pid));
  } finally {
    await harness.close();
  }
});
