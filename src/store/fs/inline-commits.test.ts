// Awaited commits written on the calling thread: only while no other log of the store commits, with the same
// durability and the same cut-back of a failed write as a commit through the pool.
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { NewEvent } from "../../protocol/events.js";
import { InlineCommits } from "./inline-commits.js";
import { JsonlEventLog, readEventsFile } from "./jsonl-log.js";
import { burnMark } from "./log-format.js";
import { canWriteNow, type LogIO, nodeLogIO } from "./log-io.js";
import { testIO } from "./testing/fault-io.js";

const call = (id: string): NewEvent => ({
  type: "tool.call",
  turn: "t1",
  data: { id, name: "echo", arguments: {} },
});
const AWAITED = { awaited: true };

let dir: string;
const opened: JsonlEventLog[] = [];

async function open(name: string, io: LogIO, inline: InlineCommits): Promise<JsonlEventLog> {
  const log = await JsonlEventLog.open(path.join(dir, name), name, io, { inline });
  opened.push(log);
  return log;
}

beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), "brain-inline-"));
});

afterEach(async () => {
  await Promise.allSettled(opened.splice(0).map((l) => l.close()));
  await fs.rm(dir, { recursive: true, force: true });
});

// Only where writes are O_DSYNC (Linux): elsewhere a commit needs its fdatasync, and always goes through the pool.
describe.runIf(nodeLogIO.syncWrites)("inline commits", () => {
  it("writes an awaited commit of a log alone on the calling thread, any other through the pool", async () => {
    const io = testIO(true, { writeNow: true });
    const log = await open("a", io, new InlineCommits());
    const [first] = await log.append([call("c1")], AWAITED);
    expect(io.counts).toMatchObject({ now: 1, write: 0, datasync: 0 });
    const [second] = await log.append([call("c2")]);
    expect(io.counts).toMatchObject({ now: 1, write: 1, datasync: 0 });
    expect(await readEventsFile(path.join(dir, "a"))).toEqual([first, second]);
  });

  it("writes a commit that several awaited appends wait on (calls in flight together) through the pool", async () => {
    const io = testIO(true, { writeNow: true });
    const log = await open("a", io, new InlineCommits());
    const [[c1], [c2]] = await Promise.all([
      log.append([call("c1")], AWAITED),
      log.append([call("c2")], AWAITED),
    ]);
    expect([c1?.seq, c2?.seq]).toEqual([1, 2]);
    expect(io.counts).toMatchObject({ now: 0, write: 1 });
  });

  it("an awaited append carries the deferred ones queued before it", async () => {
    const io = testIO(true, { writeNow: true });
    const log = await open("a", io, new InlineCommits());
    const result: NewEvent = {
      type: "tool.result",
      turn: "t1",
      data: { id: "c1", content: [{ type: "text", text: "x" }], is_error: false },
    };
    const deferred = log.append([result], { deferred: true });
    const next = log.append([call("c2")], AWAITED);
    const [[r], [c]] = await Promise.all([deferred, next]);
    expect([r?.seq, c?.seq]).toEqual([1, 2]);
    expect(io.counts).toMatchObject({ now: 1, write: 0 });
  });

  it("goes through the pool while another log's commit is in flight there", async () => {
    const io = testIO(true, { writeNow: true });
    const inline = new InlineCommits();
    const [a, b] = [await open("a", io, inline), await open("b", io, inline)];
    const release = io.holdDurable();
    const held = b.append([call("b1")]);
    await new Promise((r) => setImmediate(r)); // b's write has started and is held
    const mine = a.append([call("a1")], AWAITED);
    release();
    await Promise.all([held, mine]);
    expect(io.counts).toMatchObject({ now: 0, write: 2 });
  });

  it("goes through the pool after another log committed within the quiet time", async () => {
    const io = testIO(true, { writeNow: true });
    const inline = new InlineCommits(Number.POSITIVE_INFINITY);
    const [a, b] = [await open("a", io, inline), await open("b", io, inline)];
    await a.append([call("a1")], AWAITED);
    expect(io.counts).toMatchObject({ now: 1, write: 0 });
    await b.append([call("b1")], AWAITED);
    await a.append([call("a2")], AWAITED);
    expect(io.counts).toMatchObject({ now: 1, write: 2 });
  });

  it("goes through the pool after a write on the calling thread was slow", async () => {
    const io = testIO(true, { writeNow: true });
    const log = await open("a", io, new InlineCommits(20, -1)); // every write counts as slow
    await log.append([call("c1")], AWAITED);
    await log.append([call("c2")], AWAITED);
    expect(io.counts).toMatchObject({ now: 1, write: 1 });
  });

  it("one slow write among fast ones keeps the commits on the calling thread; writes slow on average do not, until fast again", async () => {
    const io = testIO(true, { writeNow: true });
    let clock = 0;
    let writeMs = 1;
    const writeNow = io.writeNow?.bind(io);
    io.writeNow = (...args) => {
      clock += writeMs;
      return writeNow?.(...args) ?? 0;
    };
    const log = await open("a", io, new InlineCommits(20, 5, () => clock));
    for (const ms of [1, 1, 30, 1, 1]) {
      writeMs = ms;
      await log.append([call(`fast${ms}-${io.counts.now}`)], AWAITED);
    }
    expect(io.counts).toMatchObject({ now: 5, write: 0 });
    writeMs = 12; // a disk that stalls: each write 12 ms
    for (let i = 0; i < 10; i++) await log.append([call(`slow${i}`)], AWAITED);
    expect(io.counts.now).toBeLessThan(5 + 10);
    expect(io.counts.write).toBeGreaterThan(0);
    // The pool's writes are timed too (here they take no time): once fast again, commits come back.
    const now = io.counts.now;
    for (let i = 0; i < 30; i++) await log.append([call(`again${i}`)], AWAITED);
    expect(io.counts.now).toBeGreaterThan(now);
  });

  it("a failed write on the calling thread fails its batch, cuts it off and leaves the log appendable", async () => {
    const io = testIO(true, { writeNow: true });
    const file = path.join(dir, "a");
    const log = await open("a", io, new InlineCommits());
    const [first] = await log.append([call("c1")], AWAITED);
    const size = (await fs.stat(file)).size;
    io.failNext("write", "ENOSPC");
    await expect(log.append([call("c2")], AWAITED)).rejects.toThrow(/ENOSPC/);
    expect((await fs.stat(file)).size).toBe(size + burnMark(2).length); // cut back, then the mark of seq 2
    expect(log.lastSeq).toBe(1);
    const [again] = await log.append([call("c3")], AWAITED);
    expect(again?.seq).toBe(3); // c2's seq is not given again

    expect(await readEventsFile(file)).toEqual([first, again]);
  });

  it("an IO that replaced write but kept the real writeNow never writes on the calling thread", () => {
    const write: LogIO["write"] = (...args) => nodeLogIO.write(...args);
    expect(canWriteNow(nodeLogIO)).toBe(true);
    expect(canWriteNow({ ...nodeLogIO, write })).toBe(false);
    expect(canWriteNow(testIO(true))).toBe(false);
    expect(canWriteNow(testIO(false, { writeNow: true }))).toBe(false); // writes that need an fdatasync
  });
});
