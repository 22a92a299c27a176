// A newer pi says things this Brain does not know: events of new types (skipped, never fatal) and huge lines. Each
// new type is said once in the session's log, so that a pi whose events Brain no longer reads (a renamed delta)
// is seen for what it is rather than as a turn that went quiet. The real pi, behind a script that writes such
// lines on its stdout first.
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, expect, it, vi } from "vitest";
import { events, tempDir, textOf } from "../../testing/brain.js";
import { type CliBed, cliBed } from "../../testing/cli.js";
import { locateCli } from "../cli/locate.js";
import { piCliCase } from "./testing/case.js";

vi.setConfig({ testTimeout: 180_000, hookTimeout: 60_000 });

const found = locateCli("pi");
let bed: CliBed | undefined;
/** The directory of the script in front of pi. */
let dir: string | undefined;
afterEach(async () => {
  await bed?.close();
  bed = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
});

it.runIf(found)("skips events of types it does not know, saying each type once, and huge lines", async () => {
  dir = tempDir("brain-pi-newer-");
  const bin = join(dir, "pi");
  const huge = JSON.stringify({ type: "turn_start", padding: "x".repeat(8 << 20) });
  writeFileSync(join(dir, "huge.jsonl"), `${huge}\n`);
  const newer = '{"type":"reasoning_summary","text":"a"}';
  writeFileSync(
    bin,
    `#!/bin/sh\necho '${newer}'; cat "${dir}/huge.jsonl"; echo '${newer}'\nexec "${found}" "$@"\n`,
    { mode: 0o755 },
  );
  bed = await cliBed((launcher) => piCliCase.factory({ launcher, bin }), piCliCase.provider);
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
