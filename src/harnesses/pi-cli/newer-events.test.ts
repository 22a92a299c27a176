// A newer pi says things this Brain does not know: events of new types (skipped, never fatal) and huge lines. Each
// new type is said once in the session's log, so that a pi whose events Brain no longer reads (a renamed delta)
// is seen for what it is rather than as a turn that went quiet. The real pi, behind a script that writes such
// lines on its stdout first.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it, vi } from "vitest";
import { events, textOf } from "../../testing/brain.js";
import { locateCli } from "../cli/locate.js";
import { usePiBehindScript } from "./testing/behind-script.js";

vi.setConfig({ testTimeout: 180_000, hookTimeout: 60_000 });

const found = locateCli("pi");
const piBehindScript = usePiBehindScript(found ?? "pi");

it.runIf(found)("skips events of types it does not know, saying each type once, and huge lines", async () => {
  const huge = JSON.stringify({ type: "turn_start", padding: "x".repeat(8 << 20) });
  const newer = '{"type":"reasoning_summary","text":"a"}';
  const { bed } = await piBehindScript("brain-pi-newer-", (dir) => {
    writeFileSync(join(dir, "huge.jsonl"), `${huge}\n`);
    return `echo '${newer}'; cat "${dir}/huge.jsonl"; echo '${newer}'`;
  });
  const session = await bed.create();
  const turn = await session.prompt("NOTOOL hello");
  expect(await turn.settled).toEqual({ turn: turn.turn, status: "completed" });
  const all = await events(session);
  expect(textOf(all, turn.turn)).toBe("hello from fake");
  const warnings = all
    .filter((e) => e.type === "harness.warning")
    .map((e) => (e.data as { message: string }).message);
  expect(warnings.filter((w) => w.includes("reasoning_summary"))).toEqual([
    'pi-cli: pi wrote an event of a type Brain does not know ("reasoning_summary"), skipped; a pi newer than Brain knows? Further events of that type are skipped silently',
  ]);
  expect(warnings.filter((w) => w.includes("turn_start"))).toEqual([]);
});
