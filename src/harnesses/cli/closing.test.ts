// Closing a CLI harness whose program is still starting: close() finds nothing running yet, so the program that
// comes up afterwards must be stopped by the harness, not left running with no one to end it. The program here
// is a small stand-in for `codex app-server` (the handshake only), since the real one starts too quickly to be
// caught halfway.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { bareHarnessOptions, useStandIns } from "../../testing/cli.js";
import { alive, until } from "../../testing/processes.js";
import { CodexFactory } from "../codex/factory.js";

/** Answers initialize and thread/start, writes its pid, and runs until its stdin ends (as app-server does). */
const APP_SERVER = `#!/usr/bin/env node
require("node:fs").writeFileSync(process.env.PID_FILE, String(process.pid));
let buf = "";
process.stdin.on("data", (d) => {
  buf += d;
  for (let i; (i = buf.indexOf("\\n")) >= 0; buf = buf.slice(i + 1)) {
    const m = JSON.parse(buf.slice(0, i));
    if (m.id === undefined) continue;
    const result = m.method === "thread/start" ? { thread: { id: "thread-1" } } : {};
    process.stdout.write(JSON.stringify({ id: m.id, result }) + "\\n");
  }
});
process.stdin.on("end", () => process.exit(0));
setInterval(() => {}, 1000);
`;

const { make, pids } = useStandIns();

it("stops a program that was still starting when the harness closed", async () => {
  const { dir, bin, native } = make("brain-closing-", "codex", APP_SERVER);
  const pidFile = join(dir, "pid");
  const harness = await new CodexFactory({ bin, env: { PID_FILE: pidFile } }).open(
    bareHarnessOptions(native),
  );
  const turn = harness.prompt("hello", { turn: "t1", signal: new AbortController().signal });
  const failed = expect(turn).rejects.toThrow(/the session closed/);
  await harness.close();
  await failed;
  await until(() => existsSync(pidFile) && readFileSync(pidFile, "utf8") !== "");
  const pid = Number(readFileSync(pidFile, "utf8"));
  pids.push(pid);
  // Without the fix the program runs on: the test's timeout, not an assertion, catches it.
  await until(() => !alive(pid));
});
