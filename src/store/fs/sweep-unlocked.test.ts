// The sweep every `brain` command starts (sweepUnacknowledged) looks at each stored session. A session made a
// minute ago or more whose log holds its events is left as it is without its lock being taken: the lock of every
// such session, taken and released by every command, wrote into each session's directory (the lock's temp, the
// lock, their removal), cost a dozen trips through the thread pool per stored session, and while held refused an
// open of that session by anyone else (LogLockedError). An old record whose log holds no event is still removed.
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

it("leaves an old session whose log holds events, or whose record says closed, untouched (no lock taken), and removes one whose log holds none", async () => {
  home = tempDir("brain-sweep-unlocked-");
  const seed = new FsSessionStore(home);
  const then = new Date(Date.now() - 2 * UNACKNOWLEDGED_MS);
  const made = async (events: number) => {
    const { id } = await seed.create({ harness: "echo", config: {} });
    const p = seed.paths(id);
    const log = await JsonlEventLog.open(p.events, id);
    for (let i = 0; i < events; i++) await log.append([{ type: "harness.warning", data: { message: "m" } }]);
    await log.close();
    // Made long enough ago that no create can still be making it: a candidate, were its log empty.
    await fs.utimes(p.record, then, then);
    await fs.utimes(p.dir, then, then);
    return id;
  };
  const written = await made(2);
  await made(0); // unacknowledged: its log holds no event, and it is removed
  // A record that says closed was opened first (session.opened logged): its log is not even read. Here a hand-made
  // one whose log holds nothing, which only a look at its log would take for unacknowledged.
  const closed = await made(0);
  await fs.writeFile(
    seed.paths(closed).record,
    (await fs.readFile(seed.paths(closed).record, "utf8")).replace('"status": "open"', '"status": "closed"'),
  );
  expect((await seed.get(closed))?.status).toBe("closed");
  await fs.utimes(seed.paths(closed).record, then, then);
  await fs.utimes(seed.paths(closed).dir, then, then);

  const writtenAt = async () => (await fs.stat(seed.paths(written).dir)).mtimeMs;
  const before = await writtenAt();
  await new FsSessionStore(home).sweepUnacknowledged(); // as the next brain command starts
  expect((await fs.readdir(seed.root)).sort()).toEqual([written, closed].sort());
  // Nothing was made or removed in its directory (a lock taken and released changes its mtime).
  expect(await writtenAt()).toBe(before);
});
