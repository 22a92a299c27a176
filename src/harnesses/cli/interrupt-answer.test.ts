// A CLI whose interrupt is answered (Claude Code's control_response): the harness's interrupt() resolves once the
// CLI answered it (or its turn ended), not as it is written. The session cancels the turn's pending tool
// calls only then (Harness.cancelsToolsAfterInterrupt): their cancelled results reach the CLI over MCP, apart from
// its stdin, and one that came before the interrupt was taken would go on to the model.
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { bareHarnessOptions, ndjsonProgram, useStandIns } from "../../testing/cli.js";
import { ClaudeCodeFactory } from "../claude-code/factory.js";
import { ClaudeCodeHarness } from "../claude-code/harness.js";

/**
 * A stand-in for Claude Code: `running` once prompted, `interrupted` once the interrupt came; once `answer` is
 * there it answers the interrupt (not with $UNANSWERED set) and ends its turn as aborted.
 */
const CLAUDE = ndjsonProgram(
  `    const sid = "00000000-0000-4000-8000-000000000003";
    if (m.type === "user") {
      send({ type: "system", subtype: "init", session_id: sid });
      fs.writeFileSync(dir + "/running", "");
    } else if (m.type === "control_request" && m.request.subtype === "interrupt") {
      fs.writeFileSync(dir + "/interrupted", "");
      once("answer", () => {
        if (!process.env.UNANSWERED) send({ type: "control_response", response: { subtype: "success", request_id: m.request_id } });
        send({ type: "result", subtype: "error_during_execution", is_error: true, terminal_reason: "aborted_streaming", session_id: sid });
      });
    }`,
  `if (process.argv.includes("--version")) { console.log("2.1.0 (Claude Code)"); process.exit(0); }
const dir = process.env.DIR;
const fs = require("node:fs");
const once = (file, then) => { const t = setInterval(() => fs.existsSync(dir + "/" + file) && (clearInterval(t), then()), 5); };`,
);

const standIns = useStandIns();

const until = async (done: () => boolean) => {
  while (!done()) await new Promise((resolve) => setTimeout(resolve, 5));
};

/** Also: once the turn ended, no interrupt is kept waiting for an answer (one never answered was kept for good). */
async function expectInterruptWaitsForAnswer(opened: unknown, dir: string): Promise<void> {
  if (!(opened instanceof ClaudeCodeHarness)) throw new Error("the factory did not open a ClaudeCodeHarness");
  const harness = opened;
  try {
    const turn = harness.prompt("go", { turn: "t1", signal: new AbortController().signal });
    await until(() => existsSync(join(dir, "running")));
    let taken = false;
    const interrupting = harness.interrupt("t1").then(() => {
      taken = true;
    });
    await until(() => existsSync(join(dir, "interrupted")));
    expect(taken).toBe(false);
    writeFileSync(join(dir, "answer"), "");
    await interrupting;
    expect(await turn).toEqual({ interrupted: true });
    expect(harness.pendingInterrupts).toBe(0);
  } finally {
    await harness.close();
  }
}

it("claude-code: interrupt() resolves once Claude Code has answered its interrupt request", async () => {
  const { dir, native, bin } = standIns.make("brain-claude-abort-answer-", "claude", CLAUDE);
  const harness = await new ClaudeCodeFactory({ bin, env: { DIR: dir } }).open(bareHarnessOptions(native));
  await expectInterruptWaitsForAnswer(harness, dir);
});

it("claude-code: interrupt() resolves once the turn ended, when Claude Code never answers its interrupt, and forgets it", async () => {
  const { dir, native, bin } = standIns.make("brain-claude-abort-unanswered-", "claude", CLAUDE);
  const factory = new ClaudeCodeFactory({ bin, env: { DIR: dir, UNANSWERED: "1" } });
  await expectInterruptWaitsForAnswer(await factory.open(bareHarnessOptions(native)), dir);
});

it("claude-code: an interrupt Claude Code never answered is forgotten when the session closes mid-turn", async () => {
  const { dir, native, bin } = standIns.make("brain-claude-abort-closed-", "claude", CLAUDE);
  const opened = await new ClaudeCodeFactory({ bin, env: { DIR: dir, UNANSWERED: "1" } }).open(
    bareHarnessOptions(native),
  );
  if (!(opened instanceof ClaudeCodeHarness)) throw new Error("the factory did not open a ClaudeCodeHarness");
  const turn = opened.prompt("go", { turn: "t1", signal: new AbortController().signal });
  await until(() => existsSync(join(dir, "running")));
  const interrupting = opened.interrupt("t1");
  await until(() => existsSync(join(dir, "interrupted")));
  expect(opened.pendingInterrupts).toBe(1);
  await opened.close();
  await interrupting;
  expect(await turn).toEqual({ interrupted: true });
  expect(opened.pendingInterrupts).toBe(0);
});
