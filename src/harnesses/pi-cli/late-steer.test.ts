// A steer that reaches pi after its run took its last look at the steering queue (pi-agent-core's runLoop polls it
// after each assistant turn, then ends the run) is not run: pi keeps it queued, and its next prompt drains it
// after that prompt's own message. It must be answered in the Brain turn it steered, never in the next one.
// The program is a stand-in for `pi --mode rpc` with pi's queue: the first prompt's run ends only once a steer has
// come, leaving that steer queued, as pi does when the steer lands after the last poll.
import { expect, it } from "vitest";
import type { HarnessEvent } from "../../core/harness.js";
import { bareHarnessOptions, ndjsonProgram, useStandIns } from "../../testing/cli.js";
import { PiCliFactory } from "./factory.js";

const PI = ndjsonProgram(
  `    if (m.type === "steer") {
      queue.push(m.message);
      send({ type: "queue_update", steering: [...queue], followUp: [] });
      send({ id: m.id, type: "response", command: "steer", success: true });
      if (waiting) { waiting = false; send({ type: "agent_end" }); }
      continue;
    }
    if (m.type !== "prompt") continue;
    send({ id: m.id, type: "response", command: "prompt", success: true });
    send({ type: "agent_start" });
    const seen = [m.message, ...queue.splice(0)];
    const content = [{ type: "text", text: "saw: " + seen.join(" + ") }];
    send({ type: "message_end", message: { role: "assistant", content, stopReason: "stop" } });
    if (m.message === "first") waiting = true;
    else send({ type: "agent_end" });`,
  "const queue = []; let waiting = false;",
);

const standIns = useStandIns();

it("answers a steer pi queued after its run's last poll in the turn it steered, not in the next", async () => {
  const { native, bin } = standIns.make("brain-pi-late-steer-", "pi", PI);
  const logged: HarnessEvent[] = [];
  const harness = await new PiCliFactory({ bin }).open({
    ...bareHarnessOptions(native),
    emit: (e) => logged.push(e),
  });
  const said = (turn: string) =>
    logged.flatMap((e) => (e.type === "assistant.message" && e.turn === turn ? [e.data.text] : []));
  try {
    const first = harness.prompt("first", { turn: "t1", signal: new AbortController().signal });
    while (said("t1").length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    await harness.steer("late", "t1");
    expect(await first).toEqual({ interrupted: false });
    const next = harness.prompt("next", { turn: "t2", signal: new AbortController().signal });
    expect(await next).toEqual({ interrupted: false });
    expect(said("t1")).toEqual(["saw: first", "saw: late"]);
    expect(said("t2")).toEqual(["saw: next"]);
  } finally {
    await harness.close();
  }
});
