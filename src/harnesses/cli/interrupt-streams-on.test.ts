// A CLI that streams on past an interrupt, never falling silent: the interrupt's grace, counted while Brain reads
// it, never runs out as silence; the hard limit of the wait (5 times the grace of reading) ends it and the CLI is
// killed. The warning says so, not merely "within <grace>", which the kill came five times later than.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { bareHarnessOptions, ndjsonProgram, useStandIns } from "../../testing/cli.js";
import { ClaudeCodeFactory } from "../claude-code/factory.js";

const GRACE_MS = 300;

/** A stand-in Claude Code: once prompted (`running`), a text delta every 2 ms until killed; deaf to interrupts. */
const CLAUDE = ndjsonProgram(
  `    const sid = "00000000-0000-4000-8000-000000000005";
    if (m.type === "user") {
      send({ type: "system", subtype: "init", session_id: sid });
      const delta = { type: "text_delta", text: "x" };
      setInterval(() => send({ type: "stream_event", event: { type: "content_block_delta", index: 0, delta }, session_id: sid, parent_tool_use_id: null, uuid: "s" }), 2);
      require("node:fs").writeFileSync(process.env.DIR + "/running", "");
    }`,
  `if (process.argv.includes("--version")) { console.log("2.1.0 (Claude Code)"); process.exit(0); }`,
);

const standIns = useStandIns();

it("claude-code: a CLI killed for streaming on past an interrupt is warned of as still writing, with the limit", async () => {
  const { dir, native, bin } = standIns.make("brain-cli-streams-on-", "claude", CLAUDE);
  const factory = new ClaudeCodeFactory({ bin, env: { DIR: dir }, timeouts: { interruptGraceMs: GRACE_MS } });
  const warnings: string[] = [];
  const harness = await factory.open({
    ...bareHarnessOptions(native),
    emit: (event) => {
      if (event.type === "harness.warning") warnings.push(String(event.data?.message));
    },
  });
  try {
    const turn = harness.prompt("go", { turn: "t1", signal: new AbortController().signal });
    while (!existsSync(join(dir, "running"))) await new Promise((resolve) => setTimeout(resolve, 5));
    await harness.interrupt("t1");
    expect(await turn).toEqual({ interrupted: true });
    expect(warnings).toEqual([
      `claude-code: the CLI did not end the interrupted turn: still writing after ${5 * GRACE_MS} ms of reading ` +
        `(5 x the ${GRACE_MS} ms grace); killed it`,
    ]);
  } finally {
    await harness.close();
  }
});
