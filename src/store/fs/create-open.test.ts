// createOpen: a new session made with its log already open and locked, its first batch written while the
// directories sync, nothing acknowledged before both are durable, nothing left behind when they cannot be.
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { readEventsFile } from "./jsonl-log.js";
import { type LogIO, nodeLogIO } from "./log-io.js";
import { FsSessionStore } from "./session-store.js";

let home: string;

beforeEach(async () => {
  home = await fs.mkdtemp(path.join(os.tmpdir(), "brain-home-"));
});

afterEach(async () => {
  await fs.rm(home, { recursive: true, force: true });
});

const base = { harness: "process", config: { model: "m1" } };
const opened = { type: "session.opened" as const, data: { harness: "process", config: base.config } };

/**
 * An io whose syncs of the sessions' directories are recorded and each held until `release` is called (or
 * failed). The journal's directory (synced once per process, by its first commit) is not a session's.
 */
function heldSyncs() {
  const synced: string[] = [];
  let release: (err?: Error) => void = () => {};
  const gate = new Promise<void>((resolve, reject) => {
    release = (err) => (err ? reject(err) : resolve());
  });
  gate.catch(() => {});
  const io: LogIO = {
    ...nodeLogIO,
    syncDir: async (dir) => {
      if (!dir.startsWith(path.join(home, "sessions"))) return nodeLogIO.syncDir(dir);
      synced.push(dir);
      await gate;
      return nodeLogIO.syncDir(dir);
    },
  };
  return { io, synced, release };
}

describe("FsSessionStore.createOpen", () => {
  it("gives the log open and locked, writes its first batch while the directories sync, and syncs nothing more", async () => {
    const { io, synced, release } = heldSyncs();
    const store = new FsSessionStore(home, io);
    const { record, log, durable } = await store.createOpen({ ...base, id: "s1" });
    expect(record).toMatchObject({ id: "s1", status: "open", ...base });
    // The directories are still syncing: the first batch is written all the same.
    expect((await log.append([opened])).map((e) => e.seq)).toEqual([1]);
    expect(synced.sort()).toEqual([store.root, store.paths("s1").dir].sort());
    // The log is this caller's: another process (another store on the same home) cannot open it.
    await expect(new FsSessionStore(home).openLog("s1")).rejects.toMatchObject({ code: "locked" });
    release();
    await durable;
    await log.close();
    expect(synced).toHaveLength(2);
    expect(await store.get("s1")).toEqual(record);
    expect((await readEventsFile(store.paths("s1").events)).map((e) => e.type)).toEqual(["session.opened"]);
    expect((await fs.stat(store.paths("s1").events)).mode & 0o777).toBe(0o600);
    // Once closed it opens like any other log.
    const again = await new FsSessionStore(home).openLog("s1");
    expect(again.lastSeq).toBe(1);
    await again.close();
  });

  it("closes the log and leaves nothing behind when the directories cannot be made durable", async () => {
    const { io, release } = heldSyncs();
    const store = new FsSessionStore(home, io);
    const { log, durable } = await store.createOpen({ ...base, id: "s1" });
    const first = log.append([opened]);
    release(Object.assign(new Error("EIO: i/o error, fsync"), { code: "EIO" }));
    await expect(durable).rejects.toThrow(/cannot create .*EIO/);
    await first.catch(() => {});
    expect(await fs.readdir(store.root)).toEqual([]);
    await expect(log.append([opened])).rejects.toThrow(/closed/);
  });

  it("refuses an id in use, and a bad record, before making anything", async () => {
    const store = new FsSessionStore(home);
    const made = await store.createOpen({ ...base, id: "s1" });
    await made.durable;
    await made.log.close();
    await expect(store.createOpen({ ...base, id: "s1" })).rejects.toThrow(/already exists/);
    await expect(store.createOpen({ harness: "", config: {} })).rejects.toThrow(/field "harness"/);
    expect(await fs.readdir(store.root)).toEqual(["s1"]);
  });
});
