// A CLI's permission request that Brain cannot put to the session (its event not logged: the log refused it)
// is denied, with a warning: the CLI gets its answer and the turn goes on. Unanswered, the CLI waited for good,
// and the rejection went unhandled, which ends the daemon. The CLI is a stand-in for `claude -p` that asks once
// and ends its turn when it is told no.
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import type { HarnessEvent } from "../../core/harness.js";
import { tempDir } from "../../testing/brain.js";
import { bareHarnessOptions } from "../../testing/cli.js";
import { ClaudeCodeFactory } from "../claude-code/factory.js";

const ASKS_ONCE = `#!/usr/bin/env node
const line = (value) => process.stdout.write(JSON.stringify(value) + "\\n");
line({ type: "control_request", request_id: "r1", request: { subtype: "can_use_tool", tool_name: "Bash", input: { command: "ls" } } });
process.stdin.on("data", (d) => {
  if (String(d).includes('"behavior":"deny"')) line({ type: "result", subtype: "success", result: "told no" });
});
process.stdin.on("end", () => process.exit(0));
`;

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

it("denies a tool it could not ask the session about, and the turn goes on", async () => {
  const dir = tempDir("brain-asking-");
  dirs.push(dir);
  const bin = join(dir, "claude");
  writeFileSync(bin, ASKS_ONCE, { mode: 0o755 });
  const native = join(dir, "native");
  mkdirSync(native);
  const emitted: HarnessEvent[] = [];
  const harness = await new ClaudeCodeFactory({ bin }).open({
    ...bareHarnessOptions(native),
    emit: (event) => emitted.push(event),
    permit: () => Promise.reject(new Error("the session's log refused the event")),
  });
  try {
    const turn = harness.prompt("hello", { turn: "t1", signal: new AbortController().signal });
    expect(await turn).toEqual({ interrupted: false });
    const warnings = emitted.filter((e) => e.type === "harness.warning").map((e) => e.data.message);
    expect(warnings).toContain(
      "claude-code: could not ask about Bash, so it is denied: the session's log refused the event",
    );
  } finally {
    await harness.close();
  }
});
