// An interrupt that comes while a CLI's program is still starting ends the turn without the prompt ever going
// out: the program had nothing to stop then, and a prompt sent once it is up would run the model and its tools
// after the client stopped the turn. The program is a stand-in for `codex app-server` whose handshake waits for
// the test's word, since the real one starts too quickly to be caught halfway.
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { bareHarnessOptions, ndjsonProgram, useStandIns } from "../../testing/cli.js";
import { until } from "../../testing/processes.js";
import { CodexFactory } from "../codex/factory.js";

/** Answers initialize once $DIR/go exists (having made $DIR/starting); makes $DIR/got at a turn/start. */
const APP_SERVER = ndjsonProgram(
  `    if (m.id === undefined) continue;
    if (m.method === "initialize") {
      fs.writeFileSync(dir + "/starting", "");
      const poll = setInterval(() => {
        if (!fs.existsSync(dir + "/go")) return;
        clearInterval(poll);
        send({ id: m.id, result: {} });
      }, 5);
    } else if (m.method === "thread/start") send({ id: m.id, result: { thread: { id: "thread-1" } } });
    else if (m.method === "turn/start") {
      fs.writeFileSync(dir + "/got", JSON.stringify(m.params.input));
      send({ id: m.id, result: { turn: { id: "turn-1" } } });
    } else send({ id: m.id, result: {} });`,
  `const fs = require("node:fs");
const dir = process.env.DIR;`,
);

const standIns = useStandIns();

it("never sends the prompt of a turn interrupted while its program started; the turn ends interrupted", async () => {
  const { dir, bin, native } = standIns.make("brain-interrupt-starting-", "codex", APP_SERVER);
  const harness = await new CodexFactory({ bin, env: { DIR: dir } }).open(bareHarnessOptions(native));
  try {
    const turn = harness.prompt("hello", { turn: "t1", signal: new AbortController().signal });
    await until(() => existsSync(join(dir, "starting")));
    await harness.interrupt("t1");
    writeFileSync(join(dir, "go"), "");
    expect(await turn).toEqual({ interrupted: true });
    expect(existsSync(join(dir, "got"))).toBe(false);
  } finally {
    await harness.close();
  }
});
