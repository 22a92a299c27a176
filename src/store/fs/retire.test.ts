import fs from "node:fs/promises";
import path from "node:path";
import { gunzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import type { SessionEvent } from "../../protocol/events.js";
import { compactLog } from "./compact.js";
import { JsonlEventLog, readEventsFile } from "./jsonl-log.js";
import { archiveDir, retireSegments } from "./retire.js";
import { listSealed } from "./segments.js";
import { useLogDir } from "./testing/log-dir.js";
import { writeSegmented } from "./testing/segmented.js";

const tmp = useLogDir("brain-retire-");
const HOUR = 3_600_000;

const open = () => JsonlEventLog.open(tmp.file, "s1", undefined, { segmentBytes: 1024 });

/** Several segments; a request made in the first is still waiting. Sealed segments are aged 1 h per step. */
async function segmented(): Promise<SessionEvent[]> {
  const all = await writeSegmented(await open());
  const sealed = await listSealed(tmp.file);
  const now = Date.now();
  // The oldest is the oldest: segment i was last written (sealed.length - i) hours ago.
  for (const [i, s] of sealed.entries()) {
    const t = new Date(now - (sealed.length - i) * HOUR);
    await fs.utimes(s.path, t, t);
  }
  return all;
}

describe("retiring a log's oldest segments", () => {
  it("drops segments past an age; what remains opens, reads on from the first kept seq, and keeps the request exact", async () => {
    const all = await segmented();
    const sealed = await listSealed(tmp.file);
    expect(sealed.length).toBeGreaterThanOrEqual(3);
    const result = await retireSegments(tmp.file, "s1", { dropAfterMs: (sealed.length - 2) * HOUR + 60_000 });
    // Ages are n, n-1, …, 1 h: those older than n-2 h (the first two) go.
    expect(result).toMatchObject({ dropped: 2, archived: 0, firstSeq: sealed[2]!.first });
    const kept = all.filter((e) => e.seq >= sealed[2]!.first);
    expect(await readEventsFile(tmp.file)).toEqual(kept);
    // A cursor in the dropped range reads on from the first kept seq; one in the kept range is exact.
    expect(await readEventsFile(tmp.file, undefined, { after: 3, limit: 2 })).toEqual(kept.slice(0, 2));
    const log = await open();
    try {
      expect(log.firstSeq).toBe(sealed[2]!.first);
      expect(log.lastSeq).toBe(all.length);
      expect(await log.read(0, 3)).toEqual(kept.slice(0, 3));
      expect(await log.read(kept[4]!.seq, 2)).toEqual(kept.slice(5, 7));
      expect(log.openState()).toMatchObject({ requests: [{ seq: 2, data: { id: "p1" } }], openTurns: ["q"] });
      const [next] = await log.append([
        { type: "permission.resolved", turn: "q", data: { id: "p1" } } as never,
      ]);
      expect(next!.seq).toBe(all.length + 1);
    } finally {
      await log.close();
    }
  });

  it("keeps a request made in a dropped segment exact for compaction, which refuses the session", async () => {
    await segmented();
    await retireSegments(tmp.file, "s1", { dropAfterMs: 60_000 }); // every sealed segment
    expect(await listSealed(tmp.file)).toEqual([]);
    await expect(compactLog(tmp.file, "s1")).rejects.toThrow(/request\(s\) still waiting/);
    const log = await open();
    try {
      const head = JSON.parse((await fs.readFile(tmp.file, "utf8")).split("\n")[0]!) as { seq: number };
      expect(log.firstSeq).toBe(head.seq + 1);
      expect(log.openState().requests).toHaveLength(1);
    } finally {
      await log.close();
    }
  });

  it("archives segments past an age (gzip'd, the same bytes), then drops the archives past the drop age", async () => {
    await segmented();
    const sealed = await listSealed(tmp.file);
    const bytes = await fs.readFile(sealed[0]!.path);
    const result = await retireSegments(tmp.file, "s1", {
      archiveAfterMs: (sealed.length - 1) * HOUR + 60_000,
    });
    expect(result).toMatchObject({ archived: 1, dropped: 0, firstSeq: sealed[1]!.first });
    const archived = path.join(archiveDir(tmp.file), `${path.basename(sealed[0]!.path)}.gz`);
    expect(gunzipSync(await fs.readFile(archived))).toEqual(bytes);
    await retireSegments(tmp.file, "s1", {
      archiveAfterMs: (sealed.length - 1) * HOUR + 60_000,
      dropAfterMs: (sealed.length - 0.5) * HOUR,
    });
    await expect(fs.stat(archived)).rejects.toThrow(/ENOENT/);
  });

  it("keeps a log under a size by its oldest segments, never the one being written", async () => {
    await segmented();
    const sealed = await listSealed(tmp.file);
    const active = (await fs.stat(tmp.file)).size;
    const result = await retireSegments(tmp.file, "s1", { maxBytes: active + 2500 });
    const left = await listSealed(tmp.file);
    expect(result.dropped).toBe(sealed.length - left.length);
    expect(result.dropped).toBeGreaterThan(0);
    expect(left).toEqual(sealed.slice(sealed.length - left.length)); // the oldest went
    let total = active;
    for (const s of left) total += (await fs.stat(s.path)).size;
    expect(total).toBeLessThanOrEqual(active + 2500);
    await retireSegments(tmp.file, "s1", { maxBytes: 1 });
    expect(await listSealed(tmp.file)).toEqual([]);
    expect((await fs.stat(tmp.file)).size).toBe(active);
  });

  it("is refused while the log is open", async () => {
    await segmented();
    const log = await open();
    try {
      await expect(retireSegments(tmp.file, "s1", { dropAfterMs: 1 })).rejects.toMatchObject({
        code: "locked",
      });
    } finally {
      await log.close();
    }
  });
});
