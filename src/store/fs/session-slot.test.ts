// The spare session directory (a slot): never listed, taken by a new session with a Brain-chosen id in one
// durable write, swept when a process left it behind, and gone without a trace when the write fails.
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createBrain } from "../../cli/setup.js";
import { JOURNAL_SUFFIX } from "./journal.js";
import { JsonlEventLog, readEventsFile } from "./jsonl-log.js";
import { type LogIO, nodeLogIO } from "./log-io.js";
import { retireSegments } from "./retire.js";
import { recordText, summaryOf } from "./session-record.js";
import { isSlotText } from "./session-slot.js";
import { FsSessionStore } from "./session-store.js";
import { writeSegmented } from "./testing/segmented.js";

let home: string;
const stores: FsSessionStore[] = [];

beforeEach(async () => {
  home = await fs.mkdtemp(path.join(os.tmpdir(), "brain-home-"));
});

afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
  await fs.rm(home, { recursive: true, force: true });
});

const base = { harness: "process", config: { model: "m1" } };
const opened = { type: "session.opened" as const, data: { harness: "process", config: base.config } };

/** `slotDelayMs`: 0 makes the next slot at once; prepareSlot() makes one now whatever it is. */
function slotted(io: LogIO = nodeLogIO, slotDelayMs = 0): FsSessionStore {
  const store = new FsSessionStore(home, io, undefined, { spareSlot: true, slotDelayMs });
  stores.push(store);
  return store;
}

const dirs = async (store: FsSessionStore) => (await fs.readdir(store.root).catch(() => [])).sort();

/** An io that records each directory sync and file write by path, and fails writes to `failing.files`. */
function watchedIO() {
  const failing: { files?: RegExp } = {};
  const paths = new Map<number, string>();
  const syncs: string[] = [];
  const writes: string[] = [];
  const io: LogIO = {
    ...nodeLogIO,
    open: async (p, flags, mode) => {
      const fd = await nodeLogIO.open(p, flags, mode);
      paths.set(fd, p);
      return fd;
    },
    write: async (fd, ...rest) => {
      const file = paths.get(fd) ?? "?";
      // The store's journal (one per process, not per session) is watched by journal.test.ts.
      if (!file.endsWith(JOURNAL_SUFFIX)) writes.push(path.basename(file));
      if (failing.files?.test(file))
        throw Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
      return nodeLogIO.write(fd, ...rest);
    },
    syncDir: async (dir) => {
      if (dir.startsWith(path.join(home, "sessions"))) syncs.push(dir);
      return nodeLogIO.syncDir(dir);
    },
  };
  return { io, syncs, writes, failing };
}

describe("FsSessionStore spare slot", () => {
  it("is never a session: not listed, not found, not opened", async () => {
    const store = slotted();
    await store.prepareSlot();
    const [id] = await dirs(store);
    expect(id).toBeDefined();
    expect((await fs.readdir(store.paths(id!).dir)).sort()).toEqual([
      "checkpoints",
      "events.jsonl",
      "events.jsonl.lock",
      "native",
      "session.json",
    ]);
    expect((await fs.readFile(store.paths(id!).record, "utf8")).trim()).toBe("");
    expect(await store.list()).toEqual([]);
    expect(await store.get(id!)).toBeUndefined();
    await expect(store.openLog(id!)).rejects.toThrow(/not found/);
    await expect(store.update(id!, { status: "closed" })).rejects.toThrow(/not found/);
    // Held: another process cannot remove it from under this store.
    await expect(new FsSessionStore(home).remove(id!)).rejects.toMatchObject({ code: "locked" });
  });

  it("takes a new session in one write of its record, with no directory sync, durable once acknowledged", async () => {
    const { io, syncs, writes } = watchedIO();
    const store = slotted(io, 3_600_000); // the next slot is not made meanwhile
    await store.prepareSlot();
    const [slot] = await dirs(store);
    syncs.length = 0;
    writes.length = 0;
    const { record, log, durable } = await store.createOpen(base);
    expect(record).toMatchObject({ id: slot, status: "open", ...base });
    expect((await log.append([opened])).map((e) => e.seq)).toEqual([1]);
    await durable;
    await log.close();
    expect(syncs).toEqual([]);
    expect(writes.sort()).toEqual(["events.jsonl", "session.json"]);
    // Another store on the same home (a restart) finds the session and its first event.
    const again = new FsSessionStore(home);
    expect(await again.get(record.id)).toEqual(record);
    expect(await again.list()).toEqual([summaryOf(record)]);
    expect((await readEventsFile(again.paths(record.id).events)).map((e) => e.type)).toEqual([
      "session.opened",
    ]);
    const reopened = await again.openLog(record.id);
    expect(reopened.lastSeq).toBe(1);
    await reopened.close();
    await store.prepareSlot(); // the next one
    expect(await dirs(store)).toHaveLength(2);
  });

  it("leaves a client-chosen id to the ordinary path, and a bad record leaves the slot ready", async () => {
    const store = slotted();
    await store.prepareSlot();
    const [slot] = await dirs(store);
    const made = await store.createOpen({ ...base, id: "s1" });
    await made.log.append([opened]);
    await made.durable;
    await made.log.close();
    expect(await dirs(store)).toEqual(["s1", slot].sort());
    await expect(store.createOpen({ harness: "", config: {} })).rejects.toThrow(/field "harness"/);
    const next = await store.createOpen(base);
    expect(next.record.id).toBe(slot);
    await next.durable;
    await next.log.close();
    expect((await store.list()).map((r) => r.id).sort()).toEqual(["s1", slot].sort());
  });

  it("leaves nothing behind when the record cannot be written", async () => {
    const { io, failing } = watchedIO();
    const store = slotted(io);
    await store.prepareSlot();
    failing.files = /session\.json$/;
    const [slot] = await dirs(store);
    const { log, durable } = await store.createOpen(base);
    const first = log.append([opened]);
    await expect(durable).rejects.toThrow(/cannot create .*ENOSPC/);
    await first.catch(() => {});
    await expect(log.append([opened])).rejects.toThrow(/closed/);
    expect(await dirs(store)).not.toContain(slot);
    expect(await store.list()).toEqual([]);
  });

  it("sweeps slots a process left behind, empty or torn, and nothing else", async () => {
    const seed = new FsSessionStore(home);
    const real = await seed.create(base);
    const make = async (id: string, record: string, events = 0) => {
      const p = seed.paths(id);
      await fs.mkdir(p.native, { recursive: true });
      await fs.writeFile(p.record, record);
      const log = await JsonlEventLog.open(p.events, id);
      for (let i = 0; i < events; i++) await log.append([opened]);
      await log.close();
    };
    const full = JSON.stringify({ ...real, id: "torn" }, null, 2);
    await make("empty", "");
    await make("torn", full.slice(0, 40), 1);
    await make("zeros", `${full.slice(0, 20)}\0\0\0\0${full.slice(24)}\n`);
    // Torn-looking, but a log with more than a first event was a session: kept (and not listed).
    await make("busy", full.slice(0, 40), 2);
    expect((await seed.list()).map((r) => r.id)).toEqual([real.id]);
    // A live slot of another store on the same home is not swept.
    const other = slotted();
    await other.prepareSlot();
    const [live] = (await dirs(other)).filter(
      (d) => ![real.id, "empty", "torn", "zeros", "busy"].includes(d),
    );
    const store = slotted();
    await store.prepareSlot();
    const left = await dirs(store);
    expect(left).toContain(real.id);
    expect(left).toContain("busy");
    expect(left).toContain(live);
    for (const gone of ["empty", "torn", "zeros"]) expect(left).not.toContain(gone);
    expect(left).toHaveLength(4); // and this store's own slot
    expect((await store.list()).map((r) => r.id)).toEqual([real.id]);
  });

  it("sweeps a session a killed process left half made, never one acknowledged, young, or emptied by retention", async () => {
    const seed = new FsSessionStore(home);
    stores.push(seed);
    const made = async (events: number) => {
      const { record, log, durable } = await seed.createOpen(base);
      await durable;
      for (let i = 0; i < events; i++) await log.append([opened]);
      await log.close(); // as the process's death lets go of it: its lock is stale
      return record.id;
    };
    const age = async (id: string) => {
      const old = new Date(Date.now() - 2 * 60_000); // past UNACKNOWLEDGED_MS
      await fs.utimes(seed.paths(id).record, old, old);
    };
    // A fork killed while restoring its checkpoint: no session.opened, its staging dir beside native/.
    const halfMade = await made(0);
    await fs.mkdir(path.join(seed.paths(halfMade).dir, ".native.restoring-1-00000000-x"));
    await age(halfMade);
    const young = await made(0);
    const acknowledged = await made(1);
    await age(acknowledged);
    // A log whose every event retention dropped: its sealed segments gone, its active one just rolled (empty).
    const emptied = await made(0);
    const events = seed.paths(emptied).events;
    await writeSegmented(await JsonlEventLog.open(events, emptied, undefined, { segmentBytes: 1024 }));
    await retireSegments(events, emptied, { dropAfterMs: 0 });
    const header = (await fs.readFile(events, "utf8")).split("\n")[0];
    await fs.writeFile(events, `${header}\n`);
    expect(await readEventsFile(events)).toEqual([]);
    await age(emptied);
    expect((await seed.list()).map((r) => r.id).sort()).toEqual(
      [halfMade, young, acknowledged, emptied].sort(),
    );

    // The next start on this home.
    await createBrain({ config: {}, dir: home }, home).close();
    expect((await seed.list()).map((r) => r.id).sort()).toEqual([young, acknowledged, emptied].sort());
    expect(await dirs(seed)).not.toContain(halfMade);
  });

  it("tells every cut of a record's text from the whole", async () => {
    const text = recordText({ ...base, id: "s1", created_at: new Date().toISOString(), status: "open" });
    // Cut short of its last newline, a record is whole all the same.
    for (let n = 0; n < text.length - 1; n++) {
      expect(isSlotText(text.slice(0, n)), `${n} bytes`).toBe(true);
      expect(isSlotText(text.slice(0, n).padEnd(4096)), `${n} bytes on a blank`).toBe(true);
    }
    expect(isSlotText(text.padEnd(4096))).toBe(false);
    expect(isSlotText(text.slice(0, -1))).toBe(false);
    expect(isSlotText(text)).toBe(false);
    expect(isSlotText(`${text.slice(0, 10)}\0\0${text.slice(12)}`)).toBe(true);
    for (const damaged of ["{not json", "{ not json }\n", "[]"]) expect(isSlotText(damaged)).toBe(false);
  });

  it("still reports a complete record that is not valid", async () => {
    const store = new FsSessionStore(home);
    const { id } = await store.create(base);
    await fs.writeFile(store.paths(id).record, "{ not json }\n");
    await expect(store.get(id)).rejects.toThrow(/not valid JSON/);
  });

  it("close() removes an unused slot; the store makes another on its next create", async () => {
    const store = slotted();
    await store.prepareSlot();
    expect(await dirs(store)).toHaveLength(1);
    await store.close();
    expect(await dirs(store)).toEqual([]);
    const made = await store.createOpen(base); // no slot ready: the ordinary path, and one is made after
    await made.durable;
    await made.log.close();
    await store.prepareSlot();
    expect(await dirs(store)).toHaveLength(2);
    expect((await store.list()).map((r) => r.id)).toEqual([made.record.id]);
  });
});
