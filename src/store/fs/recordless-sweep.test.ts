// A create killed before its record was renamed into place leaves a session directory with no session.json: its
// subdirectories, an empty log, the record's temp and the lock's (as a kill -9 loop on brain serve left them).
// Never listed and never acknowledged, it was kept for good, one more per such crash; the start-up sweep removes
// it once it is old enough that no create can still be making it, and keeps one whose log holds events (damage).
import { randomUUID } from "node:crypto";
import fs from "node:fs/promises";
import { afterEach, expect, it } from "vitest";
import { tempDir } from "../../testing/brain.js";
import { JsonlEventLog } from "./jsonl-log.js";
import { UNACKNOWLEDGED_MS } from "./session-slot.js";
import { FsSessionStore } from "./session-store.js";

let home: string | undefined;

afterEach(async () => {
  if (home) await fs.rm(home, { recursive: true, force: true });
});

it("sweeps a session directory a killed create left without its record, once old, and no other", async () => {
  home = tempDir("brain-recordless-");
  const seed = new FsSessionStore(home);
  const kept = await seed.create({ harness: "echo", config: {} });
  const leftBy = async (old: boolean, events = 0) => {
    const id = randomUUID();
    const p = seed.paths(id);
    await fs.mkdir(p.native, { recursive: true });
    await fs.mkdir(p.checkpoints);
    await fs.writeFile(p.events, "");
    const log = await JsonlEventLog.open(p.events, id);
    for (let i = 0; i < events; i++) await log.append([{ type: "harness.warning", data: { message: "m" } }]);
    await log.close();
    await fs.writeFile(`${p.record}.3f2a9c0b1d4e.tmp`, '{\n  "id": ');
    await fs.writeFile(`${p.events}.lock.76662be107ea9bb0.tmp`, "{}\n");
    if (old) {
      const then = new Date(Date.now() - 2 * UNACKNOWLEDGED_MS);
      await fs.utimes(p.dir, then, then);
    }
    return id;
  };
  const killed = await leftBy(true);
  const young = await leftBy(false);
  const damaged = await leftBy(true, 1);

  await new FsSessionStore(home).sweepUnacknowledged(); // as the next brain serve or brain run starts
  const left = await fs.readdir(seed.root);
  expect(left).not.toContain(killed);
  expect(left.sort()).toEqual([kept.id, young, damaged].sort());
});
