// A journal's (journal.ts) process dying while another takes its logs: the events it acknowledged (durable in its
// journal only) must reach its logs exactly once, whoever opens or replays them, and whenever it dies.
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { JOURNAL_SUFFIX } from "./journal.js";
import { replayJournals } from "./journal-replay.js";
import { type LogIO, nodeLogIO } from "./log-io.js";
import { acquireLogLock } from "./log-lock.js";
import { FsSessionStore } from "./session-store.js";
import { type JournalingChild, journalingChild } from "./testing/journaling-child.js";

let home: string;
let child: JournalingChild | undefined;

beforeEach(async () => {
  home = await fs.mkdtemp(path.join(os.tmpdir(), "brain-journal-takeover-"));
});

afterEach(async () => {
  await child?.kill();
  child = undefined;
  await fs.rm(home, { recursive: true, force: true });
});

const EVENTS = 5;

/**
 * A child that appends EVENTS events to session `a` through its store's journal, one commit each, says "ready"
 * and waits, holding the log and its journal. Resolves with its kill, which resolves once it is gone (reaped).
 */
async function journalingOwner(): Promise<() => Promise<void>> {
  child = await journalingChild(
    home,
    `await store.create({ id: "a", harness: "process", config: { model: "m1" } });
    const log = await store.openLog("a");
    for (let k = 1; k <= ${EVENTS}; k++) await log.append([{ type: "assistant.delta", turn: "t1", data: { text: "e" + k } }]);
    process.stdout.write("ready\\n");
    setInterval(() => {}, 1 << 30);`,
  );
  return child.kill;
}

/** What a crash of the machine leaves of the log: its file as created (its appends were never synced). */
async function loseUnsynced(): Promise<void> {
  const events = path.join(home, "sessions", "a", "events.jsonl");
  await fs.truncate(events, 0);
  await fs.rm(`${events}.state`, { force: true });
}

const all = Array.from({ length: EVENTS }, (_, i) => `e${i + 1}`);

/** Every event the owner wrote is in log "a" as `store` (a journaling one by default) opens it, in order; closes it. */
async function expectAll(
  store = new FsSessionStore(home, undefined, undefined, { journal: true }),
): Promise<void> {
  try {
    const log = await store.openLog("a");
    try {
      const events = await log.read(0);
      expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
      expect(events.map((e) => (e.data as { text: string }).text)).toEqual(all);
    } finally {
      await log.close();
    }
  } finally {
    await store.close();
  }
}

it("an open replays the journal of a log's owner that died after the open looked at the journals", async () => {
  const kill = await journalingOwner();
  // The owner lives while the open checks the home's journals, and dies before the open takes its log's lock.
  const store = new FsSessionStore(home, undefined, undefined, {
    journal: true,
    beforeLogLock: async () => {
      await kill();
      await loseUnsynced();
    },
  });
  await expectAll(store);
});

it("a replay keeps a dead journal whose log a live process took over, for that process's own replay", async () => {
  await (await journalingOwner())();
  await loseUnsynced();
  const dir = path.join(home, "journal");
  const events = path.join(home, "sessions", "a", "events.jsonl");
  // A process took the dead owner's log (its lock) and waits for the home's replay lock, which another replay has.
  const taken = await acquireLogLock(events, { session: "a" });
  try {
    await replayJournals(dir, nodeLogIO);
    expect((await fs.readdir(dir)).filter((n) => n.endsWith(JOURNAL_SUFFIX))).toHaveLength(1);
    await replayJournals(dir, nodeLogIO, undefined, events);
  } finally {
    await taken.release();
  }
  expect((await fs.readdir(dir)).filter((n) => n.endsWith(JOURNAL_SUFFIX))).toEqual([]);
  await expectAll();
});

it("a replay syncs a dead owner's log before it removes the journal, when the file holds the records already", async () => {
  // Killed, not crashed: its log's file holds every event (in the page cache), not synced; only its journal is.
  await (await journalingOwner())();
  const [paths, calls] = [new Map<number, string>(), [] as string[]];
  const io: LogIO = {
    ...nodeLogIO,
    open: async (p, flags, mode) => {
      const fd = await nodeLogIO.open(p, flags, mode);
      paths.set(fd, path.basename(p));
      return fd;
    },
    datasync: async (fd) => {
      calls.push(`datasync ${paths.get(fd)}`);
      await nodeLogIO.datasync(fd);
    },
    syncDir: async (dir) => {
      calls.push(`syncDir ${path.basename(dir)}`);
      await nodeLogIO.syncDir(dir);
    },
  };
  await replayJournals(path.join(home, "journal"), io);
  expect(await fs.readdir(path.join(home, "journal"))).not.toContainEqual(expect.stringMatching(/\.wal$/));
  // The journal's removal is made durable by a sync of its directory: the log's file must be durable before it.
  const removed = calls.indexOf("syncDir journal");
  expect(removed).toBeGreaterThan(-1);
  expect(calls.slice(0, removed)).toContain("datasync events.jsonl");
  await expectAll();
});
