import fs from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import type { NewEvent, SessionEvent } from "../../protocol/events.js";
import { runInSmallHeap } from "../../testing/small-heap.js";
import { compactLog } from "./compact.js";
import { JsonlEventLog, readEventsFile } from "./jsonl-log.js";
import { useLogDir } from "./testing/log-dir.js";
import { manyDeltas } from "./testing/segmented.js";

const tmp = useLogDir("brain-compact-");

function turn(id: string, status: "completed" | "failed", texts: string[]): NewEvent[] {
  return [
    { type: "user.prompt", turn: id, data: { text: `prompt ${id}` } },
    { type: "turn.started", turn: id, data: {} },
    ...texts.map((text) => ({ type: "assistant.delta", turn: id, data: { text } }) as NewEvent),
    ...(status === "completed"
      ? [{ type: "assistant.message", turn: id, data: { text: texts.join("") } } as NewEvent]
      : []),
    {
      type: "turn.settled",
      turn: id,
      data: status === "completed" ? { status } : { status, error: { code: "brain_error", message: "x" } },
    } as NewEvent,
  ];
}

async function write(...batches: NewEvent[][]): Promise<SessionEvent[]> {
  const log = await JsonlEventLog.open(tmp.file, "s1");
  const out: SessionEvent[] = [];
  for (const batch of batches) out.push(...(await log.append(batch)));
  await log.close();
  return out;
}

describe("compacting a closed session's log", () => {
  it("keeps the log's mtime: when the session was last active (its list's updated_at), not when it was compacted", async () => {
    await write(turn("t1", "completed", ["Hel", "lo"]));
    const written = new Date("2030-01-02T03:04:05.000Z");
    await fs.utimes(tmp.file, written, written);
    expect((await compactLog(tmp.file, "s1")).turns).toBe(1);
    expect((await fs.stat(tmp.file)).mtime.toISOString()).toBe(written.toISOString());
  });

  it("drops the deltas of completed turns, keeps every other event exactly, and reads on across the gaps", async () => {
    const all = await write(
      turn("t1", "completed", ["Hel", "lo"]),
      turn("t2", "failed", ["par", "tial"]),
      turn("t3", "completed", ["a", "b", "c"]),
    );
    const result = await compactLog(tmp.file, "s1");
    const kept = all.filter((e) => !(e.type === "assistant.delta" && e.turn !== "t2"));
    expect(result).toMatchObject({ eventsBefore: all.length, eventsAfter: kept.length, turns: 2 });
    expect(result.bytesAfter).toBeLessThan(result.bytesBefore);
    expect(await readEventsFile(tmp.file)).toEqual(kept);
    const log = await JsonlEventLog.open(tmp.file, "s1");
    try {
      expect(log.lastSeq).toBe(all.at(-1)?.seq);
      // A cursor inside a dropped range (t1's deltas are seqs 3 and 4): the next event kept comes next.
      expect(await log.read(3, 2)).toEqual([all[4], all[5]]);
      expect(await readEventsFile(tmp.file, undefined, { after: 3, limit: 1 })).toEqual([all[4]]);
      const [next] = await log.append([{ type: "user.prompt", turn: "t4", data: { text: "on" } }]);
      expect(next?.seq).toBe(all.length + 1);
    } finally {
      await log.close();
    }
  });

  it("refuses a session with a request still waiting, and leaves its log as it was", async () => {
    await write(turn("t1", "completed", ["x"]), [
      { type: "turn.started", turn: "t2", data: {} },
      { type: "assistant.delta", turn: "t2", data: { text: "y" } },
      { type: "permission.requested", turn: "t2", data: { id: "p1", tool: "bash" } as never },
    ]);
    const before = await fs.readFile(tmp.file);
    await expect(compactLog(tmp.file, "s1")).rejects.toThrow(
      /cannot be compacted: it has 1 request\(s\) still waiting/,
    );
    expect(await fs.readFile(tmp.file)).toEqual(before);
  });

  it("keeps a late delta that ends the log, so the next event gets a seq of its own", async () => {
    const all = await write(turn("t1", "completed", ["a"]), [
      { type: "assistant.delta", turn: "t1", data: { text: "late" } },
    ]);
    await compactLog(tmp.file, "s1");
    expect(await readEventsFile(tmp.file)).toEqual([...all.slice(0, 2), ...all.slice(3)]);
    const log = await JsonlEventLog.open(tmp.file, "s1");
    try {
      expect(log.lastSeq).toBe(all.at(-1)?.seq);
      const [next] = await log.append([{ type: "user.prompt", turn: "t2", data: { text: "on" } }]);
      expect(next?.seq).toBe(all.length + 1);
    } finally {
      await log.close();
    }
  });

  it("holds one segment's events at a time, not the whole log's", async () => {
    // 800k deltas: 8.4 MiB on disk in 1 MiB segments, some hundreds of MiB as events. A process with a 96 MiB heap
    // (a daemon's retention sweep, in small) compacts it without running out of memory.
    const log = await JsonlEventLog.open(tmp.file, "s1", undefined, { segmentBytes: 1 << 20 });
    await manyDeltas(log, false);
    await log.close();
    const compact = pathToFileURL(
      path.join(import.meta.dirname, "../../../dist/src/store/fs/compact.js"),
    ).href;
    const script = `const { compactLog } = await import(${JSON.stringify(compact)});
      process.stdout.write(JSON.stringify(await compactLog(${JSON.stringify(tmp.file)}, "s1")));`;
    const stdout = runInSmallHeap(script, 96);
    expect(JSON.parse(stdout)).toMatchObject({ eventsBefore: 800_120, eventsAfter: 120, turns: 40 });
    const kept = await readEventsFile(tmp.file);
    expect(kept.map((e) => e.type).filter((type) => type === "assistant.delta")).toEqual([]);
    expect(kept).toHaveLength(120);
  });

  it("refuses a log another process or open has", async () => {
    await write(turn("t1", "completed", ["x"]));
    const log = await JsonlEventLog.open(tmp.file, "s1");
    try {
      await expect(compactLog(tmp.file, "s1")).rejects.toThrow(/already open in this process/);
    } finally {
      await log.close();
    }
  });

  it("compacts a log in the older format", async () => {
    const ts = "2025-06-01T00:00:00.000Z";
    const old = [
      { type: "turn.started", data: {} },
      { type: "assistant.delta", data: { text: "hi" } },
      { type: "assistant.message", data: { text: "hi" } },
      { type: "turn.settled", data: { status: "completed" } },
    ].map((e, i) => ({ seq: i + 1, ts, session: "s1", turn: "t1", ...e }));
    await fs.writeFile(tmp.file, old.map((e) => `${JSON.stringify(e)}\n`).join(""));
    await compactLog(tmp.file, "s1");
    expect(await readEventsFile(tmp.file)).toEqual([old[0], old[2], old[3]]);
  });
});
