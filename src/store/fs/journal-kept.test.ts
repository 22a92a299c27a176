// A journal (journal.ts) a replay keeps, because a live process holds one of its logs, stays in the home until an
// open of that log replays it. Meanwhile an open of a log it has no records for must not replay it again: each
// time that took the home's replay lock, read the whole journal and synced every other log it names.
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { JOURNAL_SUFFIX } from "./journal.js";
import { type LogIO, nodeLogIO } from "./log-io.js";
import { acquireLogLock } from "./log-lock.js";
import { FsSessionStore } from "./session-store.js";
import { type JournalingChild, journalingChild, logIn, TWO_LOGS } from "./testing/journaling-child.js";

let home: string;
let child: JournalingChild | undefined;

beforeEach(async () => {
  home = await fs.mkdtemp(path.join(os.tmpdir(), "brain-journal-kept-"));
});

afterEach(async () => {
  await child?.kill();
  child = undefined;
  await fs.rm(home, { recursive: true, force: true });
});

const logOf = (id: string) => logIn(home, id);
const journals = async () =>
  (await fs.readdir(path.join(home, "journal"))).filter((n) => n.endsWith(JOURNAL_SUFFIX));

/**
 * The dead child's journal kept: a live process (this one, `taken`) took "a" over, and the first open in the home
 * (of "c", made here) replayed "b" and kept the journal. `touched`: the paths the store opened since (home-relative).
 */
async function keptJournal(): Promise<{
  store: FsSessionStore;
  touched: string[];
  release: () => Promise<void>;
}> {
  child = await journalingChild(home, TWO_LOGS);
  await child.kill();
  // What a crash of the machine leaves of "a": nothing its journal does not hold.
  await fs.truncate(logOf("a"), 0);
  await fs.rm(`${logOf("a")}.state`, { force: true });
  const touched: string[] = [];
  const io: LogIO = {
    ...nodeLogIO,
    open: (p, flags, mode) => {
      touched.push(path.relative(home, p));
      return nodeLogIO.open(p, flags, mode);
    },
  };
  const store = new FsSessionStore(home, io, undefined, { journal: true });
  const taken = await acquireLogLock(logOf("a"), { session: "a" });
  await store.create({ id: "c", harness: "process", config: { model: "m1" } });
  await (await store.openLog("c")).close();
  expect(await journals()).toHaveLength(1);
  touched.length = 0;
  return { store, touched, release: () => taken.release() };
}

const outsideC = (touched: string[]) =>
  touched.filter((p) => !p.startsWith(`sessions${path.sep}c${path.sep}`));

it("an open of a log a kept journal has no records for does not replay it; an open of its log still does", async () => {
  const { store, touched, release } = await keptJournal();
  try {
    try {
      await (await store.openLog("c")).close();
      expect(outsideC(touched)).toEqual([]);
    } finally {
      await release();
    }
    const log = await store.openLog("a");
    try {
      expect((await log.read(0)).map((e) => (e.data as { text: string }).text)).toEqual(["a1", "a2", "a3"]);
    } finally {
      await log.close();
    }
    expect(await journals()).toEqual([]);
  } finally {
    await store.close();
  }
});

it("a retire of a log a kept journal has no records for does not replay it", async () => {
  const { store, touched, release } = await keptJournal();
  try {
    // An archive makes the retire take the log (most logs have none and are only looked at).
    await fs.mkdir(path.join(home, "sessions", "c", "archive"));
    expect(await store.retire("c", { archiveAfterMs: 0 })).toBeUndefined();
    expect(outsideC(touched)).toEqual([]);
  } finally {
    await release();
    await store.close();
  }
});
