// A commit's delivery runs while the next commit's write is on its way (JsonlEventLog.followOn): still one write
// at a time, deliveries in order, and a failed next write cuts the file back to the commit before it.
import { constants } from "node:fs";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { NewEvent, SessionEvent } from "../../protocol/events.js";
import { JsonlEventLog, readEventsFile } from "./jsonl-log.js";
import { nodeLogIO } from "./log-io.js";
import { MODES, testIO } from "./testing/fault-io.js";

const delta = (text: string): NewEvent => ({ type: "assistant.delta", turn: "t1", data: { text } });
const texts = (events: SessionEvent[]) => events.map((e) => (e.data as { text?: string }).text ?? e.type);
const tick = () => new Promise((r) => setImmediate(r));

let dir: string;
let file: string;
const opened: JsonlEventLog[] = [];

beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), "brain-follow-"));
  file = path.join(dir, "events.jsonl");
});

afterEach(async () => {
  await Promise.allSettled(opened.splice(0).map((l) => l.close()));
  await fs.rm(dir, { recursive: true, force: true });
});

describe.each(MODES)("a commit's delivery overlaps the next write (O_DSYNC writes: %s)", (syncWrites) => {
  it("starts the next batch's write before delivering the batch before it, and delivers in order", async () => {
    const io = testIO(syncWrites);
    const log = await JsonlEventLog.open(file, "s1", io);
    opened.push(log);
    const seen: { texts: string[]; writes: number; lastSeq: number }[] = [];
    log.subscribe((events) =>
      seen.push({ texts: texts(events), writes: io.counts.write, lastSeq: log.lastSeq }),
    );
    const release = io.holdDurable();
    const writes = io.counts.write;
    const a = log.append([delta("a1"), delta("a2")]);
    await tick(); // a's commit waits to be durable
    const b = log.append([delta("b1")]);
    const c = log.append([{ type: "turn.settled", turn: "t1", data: { status: "completed" } }]);
    release();
    expect((await a).map((e) => e.seq)).toEqual([1, 2]);
    expect((await Promise.all([b, c])).flat().map((e) => e.seq)).toEqual([3, 4]);
    // a was delivered once b and c's write had started, and its readers saw no seq of theirs yet.
    expect(seen).toEqual([
      { texts: ["a1", "a2"], writes: writes + 2, lastSeq: 2 },
      { texts: ["b1", "turn.settled"], writes: writes + 2, lastSeq: 4 },
    ]);
    expect(texts(await readEventsFile(file))).toEqual(["a1", "a2", "b1", "turn.settled"]);
  });

  it("a failed next write leaves the commit before it durable and delivered, and the file cut back to it", async () => {
    const io = testIO(syncWrites);
    const log = await JsonlEventLog.open(file, "s1", io);
    opened.push(log);
    const seen: string[] = [];
    log.subscribe((events) => seen.push(...texts(events)));
    const release = io.holdDurable();
    const a = log.append([delta("a1")]);
    await tick();
    io.failNext("write", "ENOSPC"); // the next write is b's: it writes half its bytes and fails
    const b = log.append([delta("b1"), delta("b2")]);
    const settled = b.then(
      () => "resolved",
      (err: Error) => err.message,
    );
    release();
    expect((await a).map((e) => e.seq)).toEqual([1]);
    expect(await settled).toMatch(/ENOSPC/);
    expect(seen).toEqual(["a1"]);
    expect(log.lastSeq).toBe(1);
    expect(texts(await readEventsFile(file))).toEqual(["a1"]);
    // The log goes on after the failure, above the seqs b was laid out with (they are not given again).
    expect((await log.append([delta("c1")])).map((e) => e.seq)).toEqual([4]);
    await log.close();
    const reopened = await JsonlEventLog.open(file, "s1", io);
    opened.push(reopened);
    expect(texts(await reopened.read(0))).toEqual(["a1", "c1"]);
  });

  it("fails the next batch's appends when the segment roll before its write fails, instead of leaving them waiting", async () => {
    const io = testIO(syncWrites);
    let refuseNew = false;
    // The roll's new segment cannot be made (no descriptor left, no room in the directory).
    io.open = (p, flags, mode) =>
      refuseNew && flags & constants.O_EXCL
        ? Promise.reject(Object.assign(new Error("EMFILE: too many open files, open"), { code: "EMFILE" }))
        : nodeLogIO.open(p, flags, mode);
    const log = await JsonlEventLog.open(file, "s1", io, { segmentBytes: 200 });
    opened.push(log);
    const release = io.holdDurable();
    const a = log.append([{ type: "harness.warning", data: { message: "x".repeat(300) } }]);
    await tick(); // a's commit fills the segment and waits to be durable; b's write must roll first
    refuseNew = true;
    const b = log.append([delta("b1")]).then(
      () => "resolved",
      (err: Error) => err.message,
    );
    release();
    expect((await a).map((e) => e.seq)).toEqual([1]);
    expect(await b).toMatch(/cannot start a segment.*EMFILE/);
    refuseNew = false;
    expect((await log.append([delta("c1")])).map((e) => e.seq)).toEqual([2]);
    await log.close();
    expect(texts(await readEventsFile(file))).toEqual(["harness.warning", "c1"]);
  });
});
