// A watcher replaying a closed session's log while retention drops its oldest segments (a retention sweep runs on
// closed logs, and watching one does not open it): it is told of the dropped range, as a watcher that connects
// after the drop is, instead of its ids jumping past it without a word.
import { EventEmitter } from "node:events";
import { describe, expect, it } from "vitest";
import { JsonlEventLog } from "../../store/fs/jsonl-log.js";
import { nodeLogIO } from "../../store/fs/log-io.js";
import { readEventsFile } from "../../store/fs/log-read.js";
import { retireSegments } from "../../store/fs/retire.js";
import { firstSeqOf, listSealed } from "../../store/fs/segments.js";
import { useLogDir } from "../../store/fs/testing/log-dir.js";
import { TickFlusher } from "./flusher.js";
import { FeedHub } from "./hub.js";
import { DEFAULT_SSE_LIMITS, FIRST_PAGE, type SseSink, SseStream } from "./stream.js";

class Sink extends EventEmitter implements SseSink {
  readonly writes: string[] = [];
  readonly writableLength = 0;
  readonly destroyed = false;
  write(chunk: string): boolean {
    this.writes.push(chunk);
    return true;
  }
  end(): void {}
  destroy(): void {}
}

describe("SSE replay of a log retention drops segments of meanwhile", () => {
  const paths = useLogDir("brain-sse-drop-");

  it("says so with a dropped message before it goes on past the dropped range", async () => {
    const log = await JsonlEventLog.open(paths.file, "s1", nodeLogIO, { segmentBytes: 2000 });
    for (let i = 0; i < 60; i++) {
      await log.append([{ type: "harness.warning", data: { message: "x".repeat(100) } }]);
    }
    await log.close();
    expect((await listSealed(paths.file)).length).toBeGreaterThan(2);
    let reads = 0;
    let firstKept = 0;
    const hub = new FeedHub(
      async (session, after, limit) => {
        // Between the replay's first page and its second: the sweep keeps only the newest segments.
        if (++reads === 2) firstKept = (await retireSegments(paths.file, "s1", { maxBytes: 3000 })).firstSeq;
        return readEventsFile(paths.file, nodeLogIO, { after, limit, session });
      },
      undefined,
      (_) => firstSeqOf(paths.file, nodeLogIO),
    );
    const sink = new Sink();
    await new SseStream(sink, hub, "s1", 0, new TickFlusher(), DEFAULT_SSE_LIMITS).start();
    const text = sink.writes.join("");
    const ids = [...text.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]));
    expect(firstKept).toBeGreaterThan(FIRST_PAGE + 1);
    expect(ids).toEqual([
      ...Array.from({ length: FIRST_PAGE }, (_, i) => i + 1),
      ...Array.from({ length: 61 - firstKept }, (_, i) => firstKept + i),
    ]);
    const dropped = `event: dropped\ndata: ${JSON.stringify({ after: FIRST_PAGE, first_seq: firstKept })}\n\n`;
    expect(text.split(dropped)).toHaveLength(2);
    expect(text.indexOf(dropped)).toBeLessThan(text.indexOf(`id: ${firstKept}\n`));
    expect(text.indexOf(dropped)).toBeGreaterThan(text.indexOf(`id: ${FIRST_PAGE}\n`));
  });

  it("tells a cursor before the first seq once, not again at the replay's first gap", async () => {
    const log = await JsonlEventLog.open(paths.file, "s1", nodeLogIO, { segmentBytes: 2000 });
    for (let i = 0; i < 60; i++) {
      await log.append([{ type: "harness.warning", data: { message: "x".repeat(100) } }]);
    }
    await log.close();
    const { firstSeq } = await retireSegments(paths.file, "s1", { maxBytes: 3000 });
    const hub = new FeedHub(
      (session, after, limit) => readEventsFile(paths.file, nodeLogIO, { after, limit, session }),
      undefined,
      (_) => firstSeqOf(paths.file, nodeLogIO),
    );
    const sink = new Sink();
    await new SseStream(sink, hub, "s1", 3, new TickFlusher(), DEFAULT_SSE_LIMITS).start();
    const text = sink.writes.join("");
    expect(text.match(/event: dropped/g)).toHaveLength(1);
    expect(text).toContain(`data: ${JSON.stringify({ after: 3, first_seq: firstSeq })}\n\n`);
    expect([...text.matchAll(/^id: (\d+)$/gm)][0]?.[1]).toBe(String(firstSeq));
  });
});
