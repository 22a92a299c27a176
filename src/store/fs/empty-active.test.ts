// A roll whose first write fails (or a crash between a roll's rename and its first write) leaves events.jsonl
// empty beside sealed segments, and a closed log can stay like that. Opening repairs it; compaction and retention
// rewrite closed logs without opening them, so they repair it first too: taken as it is, the headerless file is a
// log starting at seq 1, and the next roll would seal it over the first segment.
import fsp from "node:fs/promises";
import { describe, expect, it } from "vitest";
import type { NewEvent, SessionEvent } from "../../protocol/events.js";
import { compactLog, foldedEvents } from "./compact.js";
import { JsonlEventLog, readEventsFile } from "./jsonl-log.js";
import { burnMark } from "./log-format.js";
import { retireSegments } from "./retire.js";
import { listSealed, seal } from "./segments.js";
import { MODES, testIO } from "./testing/fault-io.js";
import { useLogDir } from "./testing/log-dir.js";
import { streamedTurn } from "./testing/segmented.js";

const tmp = useLogDir("brain-empty-active-");
const SEGMENT = 4096;
const prompt: NewEvent = { type: "user.prompt", turn: "late", data: { text: "after the failed roll" } };

/** Completed turns until the log has rolled once and filled its new segment, then a roll whose write fails. */
async function leftEmpty(syncWrites: boolean): Promise<SessionEvent[]> {
  const io = testIO(syncWrites);
  const log = await JsonlEventLog.open(tmp.file, "s1", io, {
    segmentBytes: SEGMENT,
    idleMs: Number.POSITIVE_INFINITY,
  });
  const all: SessionEvent[] = [];
  for (let t = 0; (await listSealed(tmp.file)).length < 2; t++)
    all.push(...(await streamedTurn(log, `t${t}`, 30)));
  while ((await fsp.stat(tmp.file)).size < SEGMENT)
    all.push(...(await streamedTurn(log, `u${all.length}`, 5)));
  io.failNext("write", "ENOSPC");
  await expect(log.append([prompt])).rejects.toThrow(/ENOSPC/);
  await log.close();
  // No event in it, only the mark of the refused seq (log-format.ts).
  expect(await fsp.readFile(tmp.file, "utf8")).toBe(burnMark(all.length + 1));
  expect((await listSealed(tmp.file)).length).toBe(3);
  return all;
}

const reopen = () => JsonlEventLog.open(tmp.file, "s1", undefined, { segmentBytes: SEGMENT });

describe.each(MODES)("an empty active segment beside sealed ones (O_DSYNC writes: %s)", (syncWrites) => {
  it("retention dropping every sealed segment keeps the seqs: the log goes on after its last event", async () => {
    const all = await leftEmpty(syncWrites);
    const result = await retireSegments(tmp.file, "s1", { maxBytes: 1 });
    expect(result).toMatchObject({ dropped: 3, firstSeq: all.length + 1 });
    const log = await reopen();
    try {
      expect(log.lastSeq).toBe(all.length);
      const [next] = await log.append([prompt]);
      // all.length + 1 was the refused prompt's: never given again (docs/protocol.md).
      expect(next!.seq).toBe(all.length + 2);
    } finally {
      await log.close();
    }
  });

  it("compaction keeps every segment's events in place, and later rolls seal new names", async () => {
    const all = await leftEmpty(syncWrites);
    const sealedBefore = await listSealed(tmp.file);
    await compactLog(tmp.file, "s1");
    const { kept } = foldedEvents(all);
    expect(await readEventsFile(tmp.file)).toEqual(kept);
    const log = await reopen();
    const more: SessionEvent[] = [];
    try {
      expect(log.lastSeq).toBe(all.length);
      for (let t = 0; (await listSealed(tmp.file)).length < sealedBefore.length + 1; t++)
        more.push(...(await streamedTurn(log, `v${t}`, 30)));
      expect(more[0]!.seq).toBe(all.length + 2); // after the refused prompt's seq
      expect(await log.read(0)).toEqual([...kept, ...more]);
    } finally {
      await log.close();
    }
    expect(await readEventsFile(tmp.file)).toEqual([...kept, ...more]);
  });
});

it("a roll never seals over a segment already sealed under the same name", async () => {
  const io = testIO(false);
  await fsp.writeFile(tmp.file, "sealed first\n");
  await io.close((await seal(io, tmp.file, 1)).fd);
  await fsp.writeFile(tmp.file, "would replace it\n");
  await expect(seal(io, tmp.file, 1)).rejects.toThrow(/exists already/);
  const [sealed] = await listSealed(tmp.file);
  expect(await fsp.readFile(sealed!.path, "utf8")).toBe("sealed first\n");
  expect(await fsp.readFile(tmp.file, "utf8")).toBe("would replace it\n");
});
