// A roll is a rename and a create; the new segment's header goes in with the first batch's write, and the
// directory sync that makes both names durable runs beside that write. A crash at any step (modelled by the
// directory as its last sync left it: hard links to the files, whose bytes are the live ones) or a failing call
// leaves a log that opens to the acknowledged events, and appends go on.
import fs from "node:fs";
import fsp from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { NewEvent, SessionEvent } from "../../protocol/events.js";
import { JsonlEventLog, readEventsFile } from "./jsonl-log.js";
import { burnMark } from "./log-format.js";
import { type LogIO, nodeLogIO } from "./log-io.js";
import { listSealed } from "./segments.js";
import { MODES, testIO } from "./testing/fault-io.js";
import { useLogDir } from "./testing/log-dir.js";
import { pendingRequest } from "./testing/segmented.js";

const tmp = useLogDir("brain-roll-");
const SEGMENT = 1024;
const tick = () => new Promise((r) => setImmediate(r));
const prompt = (text: string): NewEvent => ({ type: "user.prompt", turn: "p", data: { text } });
const request = { ...pendingRequest, data: { id: "p2", tool: "bash" } } as NewEvent;

type Step = "sealed" | "created" | "torn" | "written" | "acked";
interface Crash {
  step: Step;
  /** The directory as the last sync left it, and as it is (every call done reached the disk). */
  durable: string;
  live: string;
  acked: number;
}

/**
 * The log's IO with the crash model: `durable` holds hard links to what the log's directory held at its last
 * sync. Once armed, the next roll is snapshotted (both views copied) at each step: its create (the rename done),
 * its directory sync (called; the file created), its write (half of it written), the write done with the sync
 * still to come (held until the write is durable and a few turns of the event loop after: an append acknowledged
 * then would be in `acked`).
 */
function crashIO(syncWrites: boolean, dir: string, durable: string, acked: () => number) {
  const crashes: Crash[] = [];
  let armed = false;
  let writing: Promise<void> | undefined;
  let wrote: (() => void) | undefined;
  let gate: Promise<void> | undefined;
  const copy = (from: string, to: string) => {
    fs.mkdirSync(to);
    for (const name of fs.readdirSync(from))
      if (!name.endsWith(".lock") && !name.endsWith(".tmp"))
        fs.copyFileSync(path.join(from, name), path.join(to, name));
  };
  const crash = (step: Step) => {
    const at = path.join(path.dirname(dir), `${path.basename(dir)}-${step}`);
    copy(durable, `${at}-durable`);
    copy(dir, `${at}-live`);
    crashes.push({ step, durable: `${at}-durable`, live: `${at}-live`, acked: acked() });
  };
  const link = () => {
    fs.rmSync(durable, { recursive: true, force: true });
    fs.mkdirSync(durable);
    for (const name of fs.readdirSync(dir)) fs.linkSync(path.join(dir, name), path.join(durable, name));
  };
  const torn = async (n: number, write: (half: number) => Promise<number>) => {
    const first = armed && !writing; // the roll's write (a write held meanwhile was called before it)
    if (first)
      writing = new Promise((r) => {
        wrote = r;
      });
    if (gate) await gate;
    if (!first) return write(n);
    await write(Math.floor(n / 2));
    crash("torn");
    const done = await write(n);
    crash("written");
    if (io.syncWrites) wrote?.(); // else once its fdatasync is done
    return done;
  };
  const io: LogIO = {
    ...nodeLogIO,
    syncWrites: syncWrites && nodeLogIO.syncWrites,
    writeNow: undefined,
    open(p, flags, mode) {
      if (armed && flags & fs.constants.O_CREAT && !crashes.length) crash("sealed");
      return nodeLogIO.open(p, flags, mode);
    },
    write: (fd, buf, off, len, pos) => torn(len, (n) => nodeLogIO.write(fd, buf, off, n, pos)),
    async datasync(fd) {
      await nodeLogIO.datasync(fd);
      wrote?.();
    },
    writev: (fd, bufs, pos) => {
      const whole = Buffer.concat(bufs);
      return torn(whole.length, (n) => nodeLogIO.write(fd, whole, 0, n, pos));
    },
    async syncDir(p) {
      if (armed && p === dir) {
        crash("created");
        await tick();
        if (writing) await writing;
        for (let i = 0; i < 5; i++) await tick();
        if (crashes.at(-1)!.acked !== acked()) crash("written"); // acknowledged before the sync: caught below
      }
      if (p === dir) link();
      return nodeLogIO.syncDir(p);
    },
  };
  return {
    io,
    crashes,
    arm: () => {
      armed = true;
    },
    disarm: () => {
      armed = false;
    },
    crash,
    /** Holds the next write until released. */
    hold: () => {
      let release!: () => void;
      gate = new Promise((r) => {
        release = () => {
          gate = undefined;
          r();
        };
      });
      return release;
    },
  };
}

/** Opens the log in `dir`, checks it, appends one event and reopens: the appends go on from where it ended. */
async function reopened(dir: string): Promise<SessionEvent[]> {
  const file = path.join(dir, "events.jsonl");
  const log = await JsonlEventLog.open(file, "s1", nodeLogIO, { segmentBytes: SEGMENT });
  const events = await log.read(0);
  expect(log.lastSeq).toBe(events.at(-1)!.seq);
  // The request made in the first segment is still open, and so is the one made just before the roll.
  const ids = log.openState().requests.map((r) => (r.data as { id: string }).id);
  expect(ids).toEqual(["p1", "p2"]);
  const [next] = await log.append([prompt("after the crash")]);
  expect(next!.seq).toBe(log.lastSeq);
  expect(next!.seq).toBe(events.length + 1);
  await log.close();
  expect(await readEventsFile(file, nodeLogIO, { session: "s1" })).toEqual([...events, next]);
  return events;
}

describe.each(MODES)("a crash at each step of a roll (O_DSYNC writes: %s)", (syncWrites) => {
  it.each([
    ["after the one before it is acknowledged", false],
    ["as a follow-on of the commit that filled the segment", true],
  ])("opens to the acknowledged events, whichever names the disk kept (%s)", async (_, followOn) => {
    const durable = `${tmp.dir}-durable`;
    const acked: SessionEvent[] = [];
    const c = crashIO(syncWrites, tmp.dir, durable, () => acked.length);
    try {
      const log = await JsonlEventLog.open(tmp.file, "s1", c.io, { segmentBytes: SEGMENT });
      // Delivered is acknowledged: a subscriber hears of each event once it is durable.
      log.subscribe((events) => acked.push(...events));
      await log.append([{ type: "turn.started", turn: "q", data: {} }, pendingRequest]);
      while ((await fsp.stat(tmp.file)).size < SEGMENT - 200) await log.append([prompt(`${acked.length}`)]);
      // The request goes in the commit that fills the segment: the new segment's header must name it.
      const release = followOn ? c.hold() : undefined;
      const fill = log.append([request, prompt("x".repeat(200))]);
      if (followOn)
        await tick(); // its write is under way: the next batch follows it
      else await fill;
      c.arm();
      const roll = log.append([prompt("first in the new segment")]);
      release?.();
      await Promise.all([fill, roll]);
      c.crash("acked");
      c.disarm();
      expect((await listSealed(tmp.file)).length).toBe(1);
      await log.close();
      const all = acked;
      expect(c.crashes.map((x) => x.step)).toEqual(["sealed", "created", "torn", "written", "acked"]);
      for (const crash of c.crashes) {
        // Only the names the last sync saw: exactly the events acknowledged by then.
        expect(await reopened(crash.durable), `${crash.step}, durable`).toEqual(all.slice(0, crash.acked));
        // Everything done reached the disk: the same, or the batch being written too (never acknowledged).
        const live = await reopened(crash.live);
        expect(live, `${crash.step}, live`).toEqual(all.slice(0, live.length));
        expect(live.length, `${crash.step}, live`).toBeGreaterThanOrEqual(crash.acked);
      }
    } finally {
      await fsp.rm(durable, { recursive: true, force: true });
      for (const x of c.crashes) {
        await fsp.rm(x.durable, { recursive: true, force: true });
        await fsp.rm(x.live, { recursive: true, force: true });
      }
    }
  });
});

/** A log whose segment is full after its last commit, so the next append rolls it; its events so far. */
async function full(io: LogIO): Promise<{ log: JsonlEventLog; all: SessionEvent[] }> {
  const log = await JsonlEventLog.open(tmp.file, "s1", io, { segmentBytes: SEGMENT });
  const all = await log.append([{ type: "turn.started", turn: "q", data: {} }, pendingRequest]);
  while ((await fsp.stat(tmp.file)).size < SEGMENT)
    all.push(...(await log.append([prompt(`${all.length}`)])));
  expect(await listSealed(tmp.file)).toEqual([]);
  return { log, all };
}

/** The log goes on after the failed append, and opens again to the same events. */
/** `lost`: seqs a failed batch was laid out with, which are not given again. */
async function goesOn(log: JsonlEventLog, all: SessionEvent[], lost = 0): Promise<void> {
  const next = await log.append([prompt("kept")]);
  expect(next[0]!.seq).toBe(all.length + 1 + lost);
  expect(await log.read(0)).toEqual([...all, ...next]);
  await log.close();
  expect((await listSealed(tmp.file)).map((s) => s.first)).toEqual([1]);
  const again = await JsonlEventLog.open(tmp.file, "s1", nodeLogIO, { segmentBytes: SEGMENT });
  expect(await again.read(0)).toEqual([...all, ...next]);
  expect(again.openState().requests.map((r) => (r.data as { id: string }).id)).toEqual(["p1"]);
  await again.close();
}

describe.each(MODES)("a failing call in a roll (O_DSYNC writes: %s)", (syncWrites) => {
  it("a failed header and batch write fails the batch and leaves the new segment empty, to be written again", async () => {
    const io = testIO(syncWrites);
    const { log, all } = await full(io);
    io.failNext("write", "ENOSPC"); // half of the header and batch is written
    await expect(log.append([prompt("lost")])).rejects.toThrow(/ENOSPC/);
    expect((await listSealed(tmp.file)).length).toBe(1);
    expect(await fsp.readFile(tmp.file, "utf8")).toBe(burnMark(all.length + 1)); // no event, the refused seq's mark
    expect(await readEventsFile(tmp.file)).toEqual(all);
    await goesOn(log, all, 1);
  });

  it("a failed create puts the sealed segment back, and the next append rolls", async () => {
    let fail = false;
    const io: LogIO = {
      ...testIO(syncWrites),
      open(p, flags, mode) {
        if (!fail || !(flags & fs.constants.O_CREAT)) return nodeLogIO.open(p, flags, mode);
        fail = false;
        return Promise.reject(Object.assign(new Error("EMFILE: too many open files"), { code: "EMFILE" }));
      },
    };
    const { log, all } = await full(io);
    fail = true;
    await expect(log.append([prompt("lost")])).rejects.toThrow(/EMFILE/);
    expect(await listSealed(tmp.file)).toEqual([]);
    expect(await readEventsFile(tmp.file)).toEqual(all);
    await goesOn(log, all);
  });

  it("an events.jsonl found where the new segment goes is cut before the first write", async () => {
    const io: LogIO = {
      ...testIO(syncWrites),
      open(p, flags, mode) {
        if (flags & fs.constants.O_EXCL)
          fs.writeFileSync(p, `{"seq":999,"ts":"2026-01-01T00:00:00.000Z"}\n`.repeat(50));
        return nodeLogIO.open(p, flags, mode);
      },
    };
    const { log, all } = await full(io);
    const [next] = await log.append([prompt("in the new segment")]);
    expect(next!.seq).toBe(all.length + 1);
    expect((await fsp.readFile(tmp.file, "utf8")).includes('"seq":999')).toBe(false);
    await log.close();
    const again = await JsonlEventLog.open(tmp.file, "s1", nodeLogIO, { segmentBytes: SEGMENT });
    expect(await again.read(0)).toEqual([...all, next]);
    await again.close();
  });
});
