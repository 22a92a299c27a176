// A steer that comes while pi is still starting: in bound mode the session's tool endpoint starts first, and
// until pi runs there is nothing to write the steer to. It must still reach pi within the turn, not be taken and
// dropped. The program is a stand-in for `pi --mode rpc` that answers each prompt and steer with what it got.
import { expect, it } from "vitest";
import type { HarnessEvent } from "../../core/harness.js";
import { bareHarnessOptions, ndjsonProgram, useStandIns } from "../../testing/cli.js";
import { PiCliFactory } from "./factory.js";

/** Ends each prompt (or steer) at once with an assistant message naming its text. */
const PI = ndjsonProgram(`    if (m.type !== "prompt" && m.type !== "steer") continue;
    send({ id: m.id, type: "response", command: m.type, success: true });
    send({ type: "agent_start" });
    const content = [{ type: "text", text: m.type + ": " + m.message }];
    send({ type: "message_end", message: { role: "assistant", content, stopReason: "stop" } });
    send({ type: "agent_end" });`);

const standIns = useStandIns();

it("delivers a steer sent while pi starts in bound mode, instead of dropping it", async () => {
  const { native, bin } = standIns.make("brain-pi-steer-starting-", "pi", PI);
  const logged: HarnessEvent[] = [];
  const options = bareHarnessOptions(native, { config: { tool_mode: "bound" } });
  const harness = await new PiCliFactory({ bin }).open({ ...options, emit: (e) => logged.push(e) });
  try {
    const turn = harness.prompt("hello", { turn: "t1", signal: new AbortController().signal });
    await harness.steer("and this", "t1");
    expect(await turn).toEqual({ interrupted: false });
    const said = logged.flatMap((e) => (e.type === "assistant.message" ? [e.data.text] : []));
    expect(said).toContain("prompt: hello");
    expect(said.join("\n")).toContain("and this");
  } finally {
    await harness.close();
  }
});
