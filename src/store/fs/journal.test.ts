// The store's journal (journal.ts) across a crash: what a power cut leaves on disk is simulated by copying the
// home while its logs are open (their locks and the journal's left out, as those of a process gone), then taking
// from each log's file what a crash may take from bytes never synced. Every acknowledged event must come back,
// once, in order; a torn journal tail loses only what was never acknowledged.
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import type { NewEvent, SessionEvent } from "../../protocol/events.js";
import { JOURNAL_SUFFIX } from "./journal.js";
import { parseJournal } from "./journal-replay.js";
import type { JsonlEventLog } from "./jsonl-log.js";
import { type LogIO, nodeLogIO } from "./log-io.js";
import { FsSessionStore } from "./session-store.js";
import { testIO } from "./testing/fault-io.js";

let home: string;
let scratch: string;

beforeEach(async () => {
  home = await fs.mkdtemp(path.join(os.tmpdir(), "brain-journal-"));
  scratch = await fs.mkdtemp(path.join(os.tmpdir(), "brain-journal-crash-"));
});

afterEach(async () => {
  await fs.rm(home, { recursive: true, force: true });
  await fs.rm(scratch, { recursive: true, force: true });
});

const base = { harness: "process", config: { model: "m1" } };
const delta = (text: string): NewEvent => ({ type: "assistant.delta", turn: "t1", data: { text } });
const plain = (events: SessionEvent[]) => events.map(({ seq, type, data }) => ({ seq, type, data }));

/** The home as a crash leaves it: a copy, without the locks of the process that wrote it. */
async function crashCopy(to: string): Promise<void> {
  await fs.rm(to, { recursive: true, force: true });
  await fs.cp(home, to, { recursive: true, filter: (src) => !src.endsWith(".lock") });
}

async function journalOf(at: string): Promise<string> {
  const names = (await fs.readdir(path.join(at, "journal"))).filter((n) => n.endsWith(JOURNAL_SUFFIX));
  expect(names).toHaveLength(1);
  return path.join(at, "journal", names[0]!);
}

async function readBack(at: string, id: string): Promise<SessionEvent[]> {
  const store = new FsSessionStore(at, undefined, undefined, { journal: true });
  const log = await store.openLog(id);
  try {
    return await log.read(0);
  } finally {
    await log.close();
    await store.close();
  }
}

/** Two sessions, each with a turn's commits acknowledged and their logs left open (the process "crashes"). */
async function writeTwo(): Promise<{ ids: string[]; acked: SessionEvent[][]; logs: JsonlEventLog[] }> {
  const store = new FsSessionStore(home, undefined, undefined, { journal: true });
  const ids: string[] = [];
  const acked: SessionEvent[][] = [];
  const logs: JsonlEventLog[] = [];
  for (const name of ["a", "b"]) {
    const { id } = await store.create(base);
    const log = await store.openLog(id);
    const events = [
      ...(await log.append([{ type: "turn.started", turn: "t1", data: {} }, delta(`${name}1`)])),
      ...(await log.append([delta(`${name}2 "quoted"`), delta(`${name}3`)])),
      ...(await log.append([
        { type: "assistant.message", turn: "t1", data: { text: `${name}123`, stop_reason: "stop" } },
        { type: "turn.settled", turn: "t1", data: { status: "completed" } },
      ])),
    ];
    ids.push(id);
    acked.push(events);
    logs.push(log);
  }
  return { ids, acked, logs };
}

it("brings back every acknowledged event when a crash took any part of a log's unsynced bytes", async () => {
  const { ids, acked, logs } = await writeTwo();
  const crashed = path.join(scratch, "home");
  await crashCopy(crashed);
  const file = (at: string) => path.join(at, "sessions", ids[0]!, "events.jsonl");
  const whole = await fs.readFile(file(crashed));
  const copy = path.join(scratch, "cut");
  for (let cut = 0; cut <= whole.length; cut += 7) {
    await fs.rm(copy, { recursive: true, force: true });
    await fs.cp(crashed, copy, { recursive: true });
    await fs.rm(`${file(copy)}.state`, { force: true });
    // Between the journal's sync and the log's own write: the file holds a prefix of the bytes, or zeros.
    await fs.writeFile(file(copy), whole.subarray(0, cut));
    expect(plain(await readBack(copy, ids[0]!))).toEqual(plain(acked[0]!));
    expect(plain(await readBack(copy, ids[1]!))).toEqual(plain(acked[1]!));
    expect(await fs.readdir(path.join(copy, "journal"))).toEqual([]); // replayed, then removed
  }
  await fs.rm(copy, { recursive: true, force: true });
  await fs.cp(crashed, copy, { recursive: true });
  await fs.writeFile(file(copy), Buffer.concat([whole.subarray(0, 40), Buffer.alloc(whole.length - 40)]));
  expect(plain(await readBack(copy, ids[0]!))).toEqual(plain(acked[0]!));
  for (const log of logs) await log.close();
});

it("names each log's own file in its records: a crash that took every log's unsynced bytes loses none", async () => {
  const { ids, acked, logs } = await writeTwo();
  const crashed = path.join(scratch, "home");
  await crashCopy(crashed);
  const file = (at: string, id: string) => path.join(at, "sessions", id, "events.jsonl");
  // Relative to the home, each record naming the file of its own session (the journal caches these paths).
  const heads = parseJournal(await fs.readFile(await journalOf(crashed))).map(({ head }) => head);
  expect(new Set(heads.map((h) => h.s))).toEqual(new Set(ids));
  for (const head of heads) expect(head.p).toBe(path.relative(crashed, file(crashed, head.s)));
  for (const id of ids) {
    await fs.writeFile(file(crashed, id), "");
    await fs.rm(`${file(crashed, id)}.state`, { force: true });
  }
  expect(plain(await readBack(crashed, ids[1]!))).toEqual(plain(acked[1]!));
  expect(plain(await readBack(crashed, ids[0]!))).toEqual(plain(acked[0]!));
  for (const log of logs) await log.close();
});

it("replays nothing twice when the crash came after the logs' own writes, before the journal was cut", async () => {
  const { ids, acked, logs } = await writeTwo();
  const crashed = path.join(scratch, "home");
  await crashCopy(crashed);
  expect(parseJournal(await fs.readFile(await journalOf(crashed))).length).toBeGreaterThanOrEqual(6);
  expect(plain(await readBack(crashed, ids[0]!))).toEqual(plain(acked[0]!));
  expect(plain(await readBack(crashed, ids[1]!))).toEqual(plain(acked[1]!));
  // Opened again: the journal is gone, the log as it was; a new append follows the last acknowledged seq.
  const store = new FsSessionStore(crashed, undefined, undefined, { journal: true });
  const log = await store.openLog(ids[0]!);
  const [next] = await log.append([{ type: "user.prompt", data: { text: "again" } }]);
  expect(next!.seq).toBe(acked[0]!.length + 1);
  await log.close();
  await store.close();
  for (const l of logs) await l.close();
});

it("drops a torn journal tail: the logs open to what the whole records hold, or more, never garbage", async () => {
  const { ids, acked, logs } = await writeTwo();
  const crashed = path.join(scratch, "home");
  await crashCopy(crashed);
  const journal = await journalOf(crashed);
  const bytes = await fs.readFile(journal);
  const whole = parseJournal(bytes);
  const lastStart = bytes.length - whole.at(-1)!.bytes.length - 16 - 100; // inside the last record's frame+head
  const copy = path.join(scratch, "torn");
  for (const cut of [bytes.length - 1, bytes.length - 20, Math.max(0, lastStart)]) {
    await fs.rm(copy, { recursive: true, force: true });
    await fs.cp(crashed, copy, { recursive: true });
    await fs.writeFile(path.join(copy, "journal", path.basename(journal)), bytes.subarray(0, cut));
    // The last record's batch never was acknowledged: its log's file may hold it, or a prefix of it, or none.
    const file = path.join(copy, "sessions", ids[1]!, "events.jsonl");
    const log = await fs.readFile(file);
    await fs.writeFile(file, log.subarray(0, log.length - 5));
    await fs.rm(`${file}.state`, { force: true });
    const events = plain(await readBack(copy, ids[1]!));
    expect(events.length).toBeGreaterThanOrEqual(acked[1]!.length - 2);
    expect(events).toEqual(plain(acked[1]!).slice(0, events.length));
    expect(plain(await readBack(copy, ids[0]!))).toEqual(plain(acked[0]!));
  }
  for (const l of logs) await l.close();
});

it("keeps the journal whole when a log's file fails its sync at close, and the closes say so", async () => {
  const io = testIO(true);
  const store = new FsSessionStore(home, io, undefined, { journal: true });
  const { id } = await store.create(base);
  const log = await store.openLog(id);
  const acked = await log.append([delta("a"), delta("b")]);
  io.failNext("datasync", "EIO");
  await expect(log.close()).rejects.toThrow(/EIO/);
  // The bytes the failed sync was for are only in the journal: it must not be cut, nor removed.
  await expect(store.close()).rejects.toThrow(/EIO/);
  const records = parseJournal(await fs.readFile(await journalOf(home)));
  expect(records.map(({ head }) => [head.f, head.l])).toEqual([[1, 2]]);
  // A later store replays it (its lock was let go) and removes it.
  expect(plain(await readBack(home, id))).toEqual(plain(acked));
  expect(await fs.readdir(path.join(home, "journal"))).toEqual([]);
});

it("counts a batch in its log's pending bytes (backpressure) until the journal's write of it is durable", async () => {
  // The journal's writes are held: the log's own file has the batch, unsynced, so nothing of it is durable yet.
  let release = () => {};
  const gate = new Promise<void>((resolve) => (release = resolve));
  const journalFds = new Set<number>();
  let held = 0;
  const hold = async (fd: number) => {
    if (!journalFds.has(fd)) return;
    held++;
    await gate;
  };
  const io: LogIO = {
    ...nodeLogIO,
    open: async (file, flags, mode) => {
      const fd = await nodeLogIO.open(file, flags, mode);
      if (file.endsWith(JOURNAL_SUFFIX)) journalFds.add(fd);
      return fd;
    },
    write: async (fd, ...rest) => {
      await hold(fd);
      return nodeLogIO.write(fd, ...rest);
    },
    writev: async (fd, buffers, position) => {
      await hold(fd);
      return nodeLogIO.writev!(fd, buffers, position);
    },
  };
  const store = new FsSessionStore(home, io, undefined, { journal: true });
  const { id } = await store.create(base);
  const log = await store.openLog(id);
  let acked = false;
  const appended = log.append([delta("x".repeat(4096))]).then((events) => {
    acked = true;
    return events;
  });
  await expect.poll(() => held).toBe(1);
  expect(acked).toBe(false);
  expect(log.pending.bytes).toBeGreaterThanOrEqual(4096);
  release();
  expect((await appended).map((e) => e.seq)).toEqual([1]);
  expect(log.pending.bytes).toBe(0);
  await log.close();
  await store.close();
});
