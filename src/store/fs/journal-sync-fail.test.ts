// A log's file whose sync fails while the store's journal (journal.ts) holds its unsynced bytes. After a failed
// fsync Linux may drop those bytes from the page cache and report the next fsync of the file a success without
// them: only the journal still holds them. Here the drop is what the test does to the file after the failure
// (the file cut back to what was durable before), as a machine going down after it would leave it.
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import type { NewEvent } from "../../protocol/events.js";
import { JOURNAL_SUFFIX } from "./journal.js";
import { FsSessionStore } from "./session-store.js";
import { testIO } from "./testing/fault-io.js";

let home: string;

beforeEach(async () => {
  home = await fs.mkdtemp(path.join(os.tmpdir(), "brain-journal-sync-fail-"));
});

afterEach(async () => {
  await fs.rm(home, { recursive: true, force: true });
});

const base = { harness: "process", config: { model: "m1" } };
const delta = (text: string): NewEvent => ({ type: "assistant.delta", turn: "t1", data: { text } });
const logOf = (id: string) => path.join(home, "sessions", id, "events.jsonl");

/** What the failed sync dropped: the log's file as created, no state saved past it. */
async function dropUnsynced(id: string): Promise<void> {
  await fs.truncate(logOf(id), 0);
  await fs.rm(`${logOf(id)}.state`, { force: true });
}

async function texts(store: FsSessionStore, id: string): Promise<string[]> {
  const log = await store.openLog(id);
  try {
    return (await log.read(0)).map((e) => (e.data as { text: string }).text);
  } finally {
    await log.close();
  }
}

it("a log whose sync failed at close, opened again by the same store, gets its acknowledged events back first", async () => {
  const io = testIO();
  const store = new FsSessionStore(home, io, undefined, { journal: true });
  const { id } = await store.create(base);
  const log = await store.openLog(id);
  await log.append([delta("a"), delta("b")]);
  io.failNext("datasync", "EIO");
  await expect(log.close()).rejects.toThrow(/EIO/);
  await dropUnsynced(id);
  // Not a new log at seq 1: the events it acknowledged, and the next append after them.
  const again = await store.openLog(id);
  expect((await again.read(0)).map((e) => (e.data as { text: string }).text)).toEqual(["a", "b"]);
  expect((await again.append([delta("c")])).map((e) => e.seq)).toEqual([3]);
  await again.close();
  await expect(store.close()).rejects.toThrow(/EIO/); // the journal kept for the next store
  expect(await texts(new FsSessionStore(home, undefined, undefined, { journal: true }), id)).toEqual([
    "a",
    "b",
    "c",
  ]);
});

it("a failed sync of an open log's file keeps the journal from being cut by a later sync that succeeds", async () => {
  const io = testIO();
  const store = new FsSessionStore(home, io, undefined, { journal: true });
  const { id } = await store.create(base);
  const log = await store.openLog(id);
  await log.append([delta("a"), delta("b")]);
  // The next sync is the log's own, as it saves its state once idle (1 s): it fails, and is not retried.
  const synced = io.counts.datasync;
  io.failNext("datasync", "EIO");
  await expect.poll(() => io.counts.datasync, { timeout: 10_000 }).toBeGreaterThan(synced);
  // The store's close syncs the log again (a success, Linux would say) before it would cut the journal.
  await expect(store.close()).rejects.toThrow(/EIO/);
  await log.close();
  await dropUnsynced(id);
  const names = await fs.readdir(path.join(home, "journal"));
  expect(names.filter((n) => n.endsWith(JOURNAL_SUFFIX))).toHaveLength(1);
  expect(await texts(new FsSessionStore(home, undefined, undefined, { journal: true }), id)).toEqual([
    "a",
    "b",
  ]);
});
