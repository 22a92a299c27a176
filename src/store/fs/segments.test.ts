import fs from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { SessionEvent } from "../../protocol/events.js";
import { compactLog } from "./compact.js";
import { JsonlEventLog, readEventsFile } from "./jsonl-log.js";
import { burnMark } from "./log-format.js";
import { type LogIO, nodeLogIO } from "./log-io.js";
import { lastSeqOfFile, tailOfFile } from "./log-read.js";
import { statePath } from "./log-state.js";
import { listSealed } from "./segments.js";
import { useLogDir } from "./testing/log-dir.js";
import { streamedTurn as turn, writeSegmented } from "./testing/segmented.js";

const tmp = useLogDir("brain-segments-");
const SEGMENT = 2048;

const open = (io: LogIO = nodeLogIO) => JsonlEventLog.open(tmp.file, "s1", io, { segmentBytes: SEGMENT });

/** A log of several segments, with a request made in its first segment and never answered. */
const segmented = async (): Promise<SessionEvent[]> => writeSegmented(await open());

/** Counts the opens of each file: an open that reads only the tail opens no sealed segment. */
function countingIO(): LogIO & { opened: string[] } {
  const opened: string[] = [];
  return {
    ...nodeLogIO,
    opened,
    open: (p, flags, mode) => {
      opened.push(path.basename(p));
      return nodeLogIO.open(p, flags, mode);
    },
  };
}

describe("a log in segments", () => {
  it("rolls past the segment size, each segment named by the first seq of its range, and reads the same events", async () => {
    const all = await segmented();
    const sealed = await listSealed(tmp.file);
    expect(sealed.length).toBeGreaterThan(2);
    expect(sealed[0]!.first).toBe(1);
    for (const s of sealed)
      expect(path.basename(s.path)).toBe(`events.${String(s.first).padStart(16, "0")}.jsonl`);
    expect(await readEventsFile(tmp.file)).toEqual(all);
    const log = await open();
    try {
      expect(log.lastSeq).toBe(all.length);
      expect(log.firstSeq).toBe(1);
      expect(await log.read(0)).toEqual(all);
      // Every cursor, across every segment boundary, from the live log and from the files.
      for (const s of sealed) {
        for (const after of [s.first - 2, s.first - 1, s.first]) {
          if (after < 0) continue;
          const want = all.filter((e) => e.seq > after).slice(0, 5);
          expect(await log.read(after, 5)).toEqual(want);
          expect(await readEventsFile(tmp.file, undefined, { after, limit: 5 })).toEqual(want);
        }
      }
      expect(await log.read(all.length - 10, 10)).toEqual(all.slice(-10));
    } finally {
      await log.close();
    }
  });

  it("opens from the last segment alone, keeping a request made in the first exact, and carries on the seqs", async () => {
    const all = await segmented();
    const io = countingIO();
    const log = await open(io);
    try {
      expect(io.opened.filter((name) => name !== "events.jsonl")).toEqual([]);
      expect(log.openState()).toMatchObject({ requests: [{ seq: 2, data: { id: "p1" } }], openTurns: ["q"] });
      // A read opens only the segments that hold what it asks for.
      expect(await log.read(all.length - 3)).toEqual(all.slice(-3));
      expect(io.opened.filter((name) => name !== "events.jsonl")).toEqual([]);
      const sealed = await listSealed(tmp.file);
      expect(await log.read(sealed[1]!.first, 2)).toEqual(all.slice(sealed[1]!.first, sealed[1]!.first + 2));
      expect(io.opened.filter((name) => name !== "events.jsonl")).toEqual([path.basename(sealed[1]!.path)]);
      const [next] = await log.append([
        { type: "permission.resolved", turn: "q", data: { id: "p1" } } as never,
      ]);
      expect(next!.seq).toBe(all.length + 1);
    } finally {
      await log.close();
    }
    // Without a saved state the open still reads only the last segment: its header has what came before.
    await fs.rm(statePath(tmp.file));
    const io2 = countingIO();
    const again = await open(io2);
    try {
      expect(io2.opened.filter((name) => name !== "events.jsonl")).toEqual([]);
      expect(again.openState()).toMatchObject({ requests: [], openTurns: ["q"] });
    } finally {
      await again.close();
    }
  });

  it("rebuilds the open state from the last segment after a crash between a write and the state's update", async () => {
    await segmented();
    const stale = await fs.readFile(statePath(tmp.file));
    const log = await open();
    await log.append([{ type: "permission.resolved", turn: "q", data: { id: "p1" } } as never]);
    await log.append([{ type: "turn.settled", turn: "q", data: { status: "completed" } }]);
    const last = log.lastSeq;
    await log.close();
    await fs.writeFile(statePath(tmp.file), stale);
    const reopened = await open();
    try {
      expect(reopened.openState()).toEqual({ requests: [], openTurns: [] });
      expect(reopened.lastSeq).toBe(last);
    } finally {
      await reopened.close();
    }
  });

  it.each([
    ["missing", undefined],
    ["holding a torn header", '{"brain_log":2,"sess'],
  ])(
    "starts events.jsonl again when a crash came between sealing a segment and starting the next (%s)",
    async (_, leftover) => {
      const all = await segmented();
      const base = JSON.parse((await fs.readFile(tmp.file, "utf8")).split("\n")[0]!) as { seq: number };
      await fs.rename(tmp.file, path.join(tmp.dir, `events.${String(base.seq + 1).padStart(16, "0")}.jsonl`));
      if (leftover !== undefined) await fs.writeFile(tmp.file, leftover);
      expect(await readEventsFile(tmp.file)).toEqual(all);
      // A cursor in the last sealed segment reads on from there, not from the segment without a header.
      expect(await readEventsFile(tmp.file, undefined, { after: all.length - 3 })).toEqual(all.slice(-3));
      const log = await open();
      try {
        expect(log.lastSeq).toBe(all.length);
        expect(log.openState()).toMatchObject({ requests: [{ data: { id: "p1" } }], openTurns: ["q"] });
        expect(await log.read(all.length - 3)).toEqual(all.slice(-3));
        const [next] = await log.append([{ type: "turn.started", turn: "z", data: {} }]);
        expect(next!.seq).toBe(all.length + 1);
      } finally {
        await log.close();
      }
      expect((await readEventsFile(tmp.file)).length).toBe(all.length + 1);
    },
  );

  it.each([
    ["being written", "written"],
    ["missing after a seal", "missing"],
    ["holding a torn header after a seal", "torn"],
  ])("finds a closed log's last seq from its last segment alone (events.jsonl %s)", async (_, active) => {
    const all = await segmented();
    const sealed = await listSealed(tmp.file);
    let last = "events.jsonl";
    if (active !== "written") {
      const base = JSON.parse((await fs.readFile(tmp.file, "utf8")).split("\n")[0]!) as { seq: number };
      last = `events.${String(base.seq + 1).padStart(16, "0")}.jsonl`;
      await fs.rename(tmp.file, path.join(tmp.dir, last));
      if (active === "torn") await fs.writeFile(tmp.file, '{"brain_log":2,"sess');
    }
    const io = countingIO();
    expect(await lastSeqOfFile(tmp.file, io)).toBe(all.length);
    expect(io.opened).toEqual(active === "written" ? ["events.jsonl"] : ["events.jsonl", last]);
    expect(io.opened).not.toContain(path.basename(sealed[0]!.path));
    // What is open there too: the request made in the first segment, carried by the later ones' headers.
    const tailIO = countingIO();
    expect(await tailOfFile(tmp.file, tailIO)).toEqual({
      seq: all.length,
      requests: [all[1]],
      openTurns: ["q"],
    });
    expect(tailIO.opened).toEqual(io.opened);
  });

  it("reads a closed log's last seq from its saved state's anchor on, not the lines before", async () => {
    const log = await JsonlEventLog.open(tmp.file, "s1");
    const all = [...(await turn(log, "a", 5)), ...(await turn(log, "b", 5))];
    await log.close();
    // The first event's line made garbage of the same length: only a read from the start meets it.
    const text = await fs.readFile(tmp.file, "utf8");
    const lines = text.split("\n");
    lines[1] = "x".repeat(lines[1]!.length);
    await fs.writeFile(tmp.file, lines.join("\n"));
    expect(await lastSeqOfFile(tmp.file)).toBe(all.length);
    await expect(readEventsFile(tmp.file)).rejects.toThrow();
  });

  it("gives 0 for a log without events, and fails for a session without a log", async () => {
    await (await open()).close();
    expect(await lastSeqOfFile(tmp.file)).toBe(0);
    expect(await tailOfFile(tmp.file)).toEqual({ seq: 0, requests: [], openTurns: [] });
    await expect(lastSeqOfFile(path.join(tmp.dir, "none", "events.jsonl"))).rejects.toThrow("cannot open");
  });

  it("cuts a torn tail in the last sealed segment when it has to start the next from it", async () => {
    const all = await segmented();
    await fs.rm(statePath(tmp.file), { force: true });
    const active = await fs.readFile(tmp.file, "utf8");
    const base = JSON.parse(active.split("\n")[0]!) as { seq: number };
    const sealedCopy = path.join(tmp.dir, `events.${String(base.seq + 1).padStart(16, "0")}.jsonl`);
    await fs.writeFile(sealedCopy, `${active}{"seq":${all.length + 1},"ts":"2026-`);
    await fs.rm(tmp.file);
    const log = await open();
    try {
      expect(log.lastSeq).toBe(all.length);
      expect(await fs.readFile(sealedCopy, "utf8")).toBe(active);
      const [next] = await log.append([{ type: "turn.started", turn: "z", data: {} }]);
      expect(next!.seq).toBe(all.length + 1);
    } finally {
      await log.close();
    }
  });

  it("cuts a torn tail in the segment being written, and a reader skips one at the end of any segment", async () => {
    const all = await segmented();
    await fs.appendFile(
      tmp.file,
      `{"seq":${all.length + 1},"ts":"2026-01-01T00:00:00.000Z","type":"user.pro`,
    );
    const first = (await listSealed(tmp.file))[0]!;
    const text = await fs.readFile(first.path, "utf8");
    await fs.appendFile(first.path, '[9999,1,"torn');
    expect(await readEventsFile(tmp.file)).toEqual(all);
    expect(await readEventsFile(tmp.file, undefined, { after: 1, limit: 1000 })).toEqual(all.slice(1));
    const log = await open();
    try {
      expect(log.lastSeq).toBe(all.length);
      expect(await log.read(0)).toEqual(all);
    } finally {
      await log.close();
    }
    expect((await fs.readFile(tmp.file, "utf8")).endsWith("\n")).toBe(true);
    await fs.writeFile(first.path, text);
  });

  it("fails the batch whose directory sync fails in a new segment, and writes it again, header first, with the next", async () => {
    let failSync = false;
    let syncs = 0;
    const io: LogIO = {
      ...nodeLogIO,
      syncDir: async (p) => {
        syncs++;
        if (failSync) {
          failSync = false;
          throw Object.assign(new Error("EIO: i/o error, fsync"), { code: "EIO" });
        }
        return nodeLogIO.syncDir(p);
      },
    };
    const log = await open(io);
    try {
      const all: SessionEvent[] = [];
      // One event a commit, so the segment is full right after the last one and nothing has rolled yet.
      while ((await fs.stat(tmp.file)).size < SEGMENT)
        all.push(
          ...(await log.append([{ type: "user.prompt", turn: "p", data: { text: `prompt ${all.length}` } }])),
        );
      expect(await listSealed(tmp.file)).toEqual([]);
      failSync = true;
      await expect(log.append([{ type: "user.prompt", turn: "x", data: { text: "lost" } }])).rejects.toThrow(
        /EIO/,
      );
      // The roll stands with its segment cut back to no event, as a crash before the sync could leave it too.
      expect((await listSealed(tmp.file)).map((s) => s.first)).toEqual([1]);
      expect(await fs.readFile(tmp.file, "utf8")).toBe(burnMark(all.length + 1)); // and the refused seq's mark
      expect(await readEventsFile(tmp.file)).toEqual(all);
      syncs = 0;
      const [next] = await log.append([{ type: "user.prompt", turn: "x", data: { text: "kept" } }]);
      expect(next!.seq).toBe(all.length + 2); // above the lost one's, which is not given again
      expect(syncs).toBe(1);
      expect((await listSealed(tmp.file)).map((s) => s.first)).toEqual([1]);
      expect(await log.read(0)).toEqual([...all, next]);
      syncs = 0;
      await log.append([{ type: "user.prompt", turn: "x", data: { text: "no sync" } }]);
      expect(syncs).toBe(0);
    } finally {
      await log.close();
    }
    const again = await open();
    try {
      expect(again.lastSeq).toBe((await readEventsFile(tmp.file)).at(-1)!.seq);
      expect((await fs.readFile(tmp.file, "utf8")).startsWith('{"brain_log":2,"session":"s1","seq":')).toBe(
        true,
      );
    } finally {
      await again.close();
    }
  });

  it("opens a log written before segments, keeps growing it, and rolls it like any other", async () => {
    const old: string[] = [];
    const want: SessionEvent[] = [];
    for (let seq = 1; seq <= 40; seq++) {
      const e = {
        seq,
        ts: "2025-06-01T00:00:00.000Z",
        session: "s1",
        turn: "old",
        type: "assistant.delta",
        data: { text: `old text ${seq} `.repeat(3) },
      } as SessionEvent;
      old.push(JSON.stringify(e));
      want.push(e);
    }
    await fs.writeFile(tmp.file, `${old.join("\n")}\n`);
    const log = await open();
    want.push(...(await turn(log, "new", 40)));
    await log.close();
    expect((await listSealed(tmp.file)).length).toBeGreaterThan(0);
    expect(await readEventsFile(tmp.file)).toEqual(want);
    const again = await open();
    try {
      expect(await again.read(35, 10)).toEqual(want.slice(35, 45));
    } finally {
      await again.close();
    }
  });

  it("compacts segment by segment: a turn's deltas dropped across a boundary, names and headers kept", async () => {
    const log = await open();
    const all: SessionEvent[] = [];
    for (let t = 0; t < 6; t++) all.push(...(await turn(log, `t${t}`, 40)));
    await log.close();
    const before = await listSealed(tmp.file);
    const result = await compactLog(tmp.file, "s1");
    const kept = all.filter((e) => e.type !== "assistant.delta");
    expect(result).toMatchObject({ eventsBefore: all.length, eventsAfter: kept.length, turns: 6 });
    expect(await listSealed(tmp.file)).toEqual(before);
    expect(await readEventsFile(tmp.file)).toEqual(kept);
    const again = await open();
    try {
      expect(again.lastSeq).toBe(all.length);
      // A cursor inside the dropped deltas reads on from the next event kept.
      expect(await again.read(3, 2)).toEqual(kept.filter((e) => e.seq > 3).slice(0, 2));
    } finally {
      await again.close();
    }
  });
});
