// The seqs of a batch the disk refused are never given again (docs/protocol.md: a reader without the lock may
// have read its lines before the cut), by the log that refused it and by the next open of the same file.
import fs from "node:fs/promises";
import nodePath from "node:path";
import { describe, expect, it } from "vitest";
import type { NewEvent } from "../../protocol/events.js";
import { compactLog } from "./compact.js";
import { JsonlEventLog, readEventsFile } from "./jsonl-log.js";
import { loadState, statePath } from "./log-state.js";
import { MODES, testIO } from "./testing/fault-io.js";
import { useLogDir } from "./testing/log-dir.js";

const warning = (message: string): NewEvent => ({ type: "harness.warning", data: { message } });
const turn = (id: string): NewEvent[] => [
  { type: "turn.started", turn: id, data: {} },
  { type: "assistant.delta", turn: id, data: { text: "hi" } },
  { type: "assistant.message", turn: id, data: { text: "hi" } } as NewEvent,
  { type: "turn.settled", turn: id, data: { status: "completed" } },
];

describe.each(MODES)("a refused batch's seqs (O_DSYNC writes: %s)", (syncWrites) => {
  const paths = useLogDir("brain-burned-");

  it("are not given again after the log is closed and opened again, before any other commit", async () => {
    const io = testIO(syncWrites);
    const log = await JsonlEventLog.open(paths.file, "s1", io);
    await log.append([warning("a")]);
    io.failNext("write", "ENOSPC"); // half its bytes written, then refused: seqs 2..4 were on disk a moment
    await expect(log.append([warning("b1"), warning("b2"), warning("b3")])).rejects.toThrow(/ENOSPC/);
    await log.close();
    const reopened = await JsonlEventLog.open(paths.file, "s1", io);
    expect((await reopened.append([warning("c")]))[0]?.seq).toBe(5);
    await reopened.close();
    expect((await readEventsFile(paths.file)).map((e) => e.seq)).toEqual([1, 5]);
    // Passed by a commit, the burn is in the log itself (its gap): the next open goes on from the last seq.
    const again = await JsonlEventLog.open(paths.file, "s1", io);
    expect((await again.append([warning("d")]))[0]?.seq).toBe(6);
    await again.close();
  });

  it("are not given again when the refused batch was the first of a new segment", async () => {
    // A full disk refuses a new segment's first block sooner than the room left in the last block of a file.
    const io = testIO(syncWrites);
    const log = await JsonlEventLog.open(paths.file, "s1", io, { segmentBytes: 100 });
    await log.append([warning("a".repeat(120))]); // the segment is full: the next batch rolls first
    io.failNext("write", "ENOSPC");
    await expect(log.append([warning("b1"), warning("b2")])).rejects.toThrow(/ENOSPC/);
    await log.close();
    const reopened = await JsonlEventLog.open(paths.file, "s1", io, { segmentBytes: 100 });
    expect((await reopened.append([warning("c")]))[0]?.seq).toBe(4);
    await reopened.close();
    expect((await readEventsFile(paths.file)).map((e) => e.seq)).toEqual([1, 4]);
  });

  it("are kept in the state the log saves when it goes idle, for an open after a kill -9", async () => {
    const io = testIO(syncWrites);
    const log = await JsonlEventLog.open(paths.file, "s1", io, { idleMs: 1 });
    await log.append([warning("a")]);
    io.failNext("write", "ENOSPC");
    await expect(log.append([warning("b1"), warning("b2")])).rejects.toThrow(/ENOSPC/);
    while (log.holdsDescriptor) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(await loadState(paths.file)).toMatchObject({ seq: 1, burned: 3 });
    await log.close();
  });

  it("are not given again when the disk refuses the state's save too", async () => {
    // The state cannot be saved (a directory where it goes), as on a disk too full for its temp file.
    await fs.mkdir(statePath(paths.file));
    await fs.writeFile(nodePath.join(statePath(paths.file), "x"), "");
    const io = testIO(syncWrites);
    const log = await JsonlEventLog.open(paths.file, "s1", io);
    await log.append([warning("a")]);
    io.failNext("write", "ENOSPC");
    await expect(log.append([warning("b1"), warning("b2"), warning("b3")])).rejects.toThrow(/ENOSPC/);
    await log.close();
    const reopened = await JsonlEventLog.open(paths.file, "s1", io);
    expect((await reopened.append([warning("c")]))[0]?.seq).toBe(5);
    await reopened.close();
  });

  it("are not given again after a kill -9 that left no state", async () => {
    const io = testIO(syncWrites);
    const log = await JsonlEventLog.open(paths.file, "s1", io, { idleMs: Number.POSITIVE_INFINITY });
    await log.append([warning("a")]);
    io.failNext("write", "ENOSPC");
    await expect(log.append([warning("b1"), warning("b2")])).rejects.toThrow(/ENOSPC/);
    // The files as a kill -9 leaves them now: the log's, and no state saved since the refusal.
    const copy = nodePath.join(paths.dir, "copy", "events.jsonl");
    await fs.mkdir(nodePath.dirname(copy));
    await fs.copyFile(paths.file, copy);
    await log.close();
    const reopened = await JsonlEventLog.open(copy, "s1", io);
    expect((await reopened.append([warning("c")]))[0]?.seq).toBe(4);
    await reopened.close();
    expect((await readEventsFile(copy)).map((e) => e.seq)).toEqual([1, 4]);
  });

  it("are not given again after a compaction rewrote the segment", async () => {
    const io = testIO(syncWrites);
    const log = await JsonlEventLog.open(paths.file, "s1", io);
    await log.append(turn("t1"));
    io.failNext("write", "ENOSPC");
    await expect(log.append([warning("b1"), warning("b2")])).rejects.toThrow(/ENOSPC/);
    await log.close();
    expect((await compactLog(paths.file, "s1", { io })).turns).toBe(1); // drops the state file with the delta
    const reopened = await JsonlEventLog.open(paths.file, "s1", io);
    expect((await reopened.append([warning("c")]))[0]?.seq).toBe(7);
    await reopened.close();
    expect((await readEventsFile(paths.file)).map((e) => e.seq)).toEqual([1, 3, 4, 7]);
  });
});
