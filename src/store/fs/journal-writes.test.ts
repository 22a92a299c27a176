// How a commit through the store's journal (journal.ts) writes its log's own file: on the loop's thread, since
// those bytes need no sync (the journal's write is the durable one), not through the thread pool, whose two
// thread wake-ups per write were most of the loop's time with a hundred sessions streaming (bench sse-load).
// And a write of that file the disk refuses still fails its batch before the journal holds a record of it.
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import type { NewEvent, SessionEvent } from "../../protocol/events.js";
import { JOURNAL_SUFFIX } from "./journal.js";
import { parseJournal } from "./journal-replay.js";
import { type LogIO, nodeLogIO } from "./log-io.js";
import { FsSessionStore } from "./session-store.js";
import { testIO } from "./testing/fault-io.js";

let home: string;

beforeEach(async () => {
  home = await fs.mkdtemp(path.join(os.tmpdir(), "brain-journal-writes-"));
});

afterEach(async () => {
  await fs.rm(home, { recursive: true, force: true });
});

const base = { harness: "process", config: { model: "m1" } };
const delta = (text: string): NewEvent => ({ type: "assistant.delta", turn: "t1", data: { text } });
const plain = (events: SessionEvent[]) => events.map(({ seq, type, data }) => ({ seq, type, data }));

async function journalRecords(): Promise<[number, number][]> {
  const dir = path.join(home, "journal");
  const names = (await fs.readdir(dir)).filter((n) => n.endsWith(JOURNAL_SUFFIX));
  expect(names).toHaveLength(1);
  return parseJournal(await fs.readFile(path.join(dir, names[0]!))).map(({ head }) => [head.f, head.l]);
}

it("writes a log's own file on the loop's thread, and only the journal's through the pool", async () => {
  const journalFds = new Set<number>();
  const pooled = { journal: 0, logs: 0 };
  let now = 0;
  const count = (fd: number) => (journalFds.has(fd) ? pooled.journal++ : pooled.logs++);
  const io: LogIO = {
    ...nodeLogIO,
    open: async (file, flags, mode) => {
      const fd = await nodeLogIO.open(file, flags, mode);
      if (file.endsWith(JOURNAL_SUFFIX)) journalFds.add(fd);
      return fd;
    },
    write: (fd, ...rest) => {
      count(fd);
      return nodeLogIO.write(fd, ...rest);
    },
    writev: (fd, buffers, position) => {
      count(fd);
      return nodeLogIO.writev!(fd, buffers, position);
    },
    writeNow: (fd, ...rest) => {
      now++;
      return nodeLogIO.writeNow!(fd, ...rest);
    },
  };
  const store = new FsSessionStore(home, io, undefined, { journal: true });
  const logs = await Promise.all(["a", "b"].map(async () => store.openLog((await store.create(base)).id)));
  // Both logs commit at once, as streaming sessions do: each commit goes through the journal.
  const acked = await Promise.all(
    logs.map((log, i) => log.append([delta(`${i}1`), delta(`${i}2 "quoted"`), delta(`${i}3`)])),
  );
  expect(pooled.journal).toBeGreaterThan(0);
  expect(pooled.logs).toBe(0);
  expect(now).toBeGreaterThanOrEqual(2);
  for (const [i, log] of logs.entries()) {
    expect(plain(await log.read(0))).toEqual(plain(acked[i]!));
    await log.close();
  }
  await store.close();
  // Read back by a fresh store from the files alone (the journal was cut and removed at close).
  const again = new FsSessionStore(home, undefined, undefined, { journal: true });
  for (const [i, events] of acked.entries()) {
    const log = await again.openLog(events[0]!.session);
    expect(plain(await log.read(0))).toEqual(plain(acked[i]!));
    await log.close();
  }
  await again.close();
});

it("fails a batch whose log file write the disk refuses, before the journal holds it; the next one goes on", async () => {
  const io = testIO(false, { writeNow: true });
  const store = new FsSessionStore(home, io, undefined, { journal: true });
  const log = await store.openLog((await store.create(base)).id);
  const first = await log.append([delta("kept")]);
  io.failNext("write", "ENOSPC");
  await expect(log.append([delta("refused")])).rejects.toThrow(/ENOSPC/);
  const after = await log.append([delta("after")]);
  expect(io.counts.now).toBeGreaterThanOrEqual(3);
  // The refused batch burned its seq (2); its bytes are neither in the log nor in a journal record.
  expect(after.map((e) => e.seq)).toEqual([3]);
  expect(await journalRecords()).toEqual([
    [1, 1],
    [3, 3],
  ]);
  expect(plain(await log.read(0))).toEqual(plain([...first, ...after]));
  await log.close();
  await store.close();
});
