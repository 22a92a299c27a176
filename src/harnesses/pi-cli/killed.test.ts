// pi killed mid-turn (kill -9, the OOM killer) before its first answer ended: pi writes its session file only once
// the session holds an assistant message, so none was written, while Brain's log has the prompt and the deltas
// streamed for it. The turn fails naming pi and its end; the next prompt must start pi afresh (what pi held: nothing),
// not refuse for ever for a lost history the failed turn never had.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it, vi } from "vitest";
import { events, textOf, waitForEvent } from "../../testing/brain.js";
import { locateCli } from "../cli/locate.js";
import { usePiBehindScript } from "./testing/behind-script.js";

vi.setConfig({ testTimeout: 180_000, hookTimeout: 60_000 });

const found = locateCli("pi");
const piBehindScript = usePiBehindScript(found ?? "pi");

it.runIf(found)("after pi is killed mid-answer in the first turn, the session prompts again", async () => {
  // The real pi, behind a script that says its pid (exec: the pid is pi's).
  const { dir, bed } = await piBehindScript("brain-pi-killed-", (dir) => `echo $$ >> "${dir}/pids"`);
  const session = await bed.create();
  const slow = await session.prompt("Talk SLOW please");
  await waitForEvent(session, (e) => e.type === "assistant.delta" && e.turn === slow.turn);
  process.kill(Number(readFileSync(join(dir, "pids"), "utf8").trim()), "SIGKILL");
  const killed = await slow.settled;
  expect(killed.status).toBe("failed");
  // pi runs under the network namespace's launcher, which exits with 128+9 for its killed child: the signal is named.
  expect(killed.error?.message).toMatch(/^pi-cli: pi was killed by SIGKILL \(exit code 137\)/);
  const next = await session.prompt("NOTOOL again");
  expect(await next.settled).toEqual({ turn: next.turn, status: "completed" });
  expect(textOf(await events(session), next.turn)).toBe("hello from fake");
});
