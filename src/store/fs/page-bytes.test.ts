// A page of a log of large events is bounded in bytes as well as in events: the readers that page (SSE catch-up,
// GET …/log) read on from its last event, and the whole-log reads the host makes without a limit stay whole.
import { describe, expect, it } from "vitest";
import { PAGE_BYTES } from "../../core/event-log.js";
import type { SessionEvent } from "../../protocol/events.js";
import { JsonlEventLog, readEventsFile } from "./jsonl-log.js";
import { listSealed } from "./segments.js";
import { useLogDir } from "./testing/log-dir.js";

const tmp = useLogDir("brain-page-");
const EVENT_BYTES = 5 << 20;

const textBytes = (page: SessionEvent[]) =>
  page.reduce((n, e) => n + ((e.data as { text?: string }).text?.length ?? 0), 0);

/** Every event after 0, a page of at most 1000 at a time; the pages' sizes in events. */
async function pages(read: (after: number) => Promise<SessionEvent[]>) {
  const all: SessionEvent[] = [];
  const sizes: number[] = [];
  for (let page = await read(0); page.length > 0; page = await read(all.at(-1)!.seq)) {
    expect(textBytes(page.slice(0, -1))).toBeLessThan(PAGE_BYTES);
    all.push(...page);
    sizes.push(page.length);
  }
  return { all, sizes };
}

describe("a page of large events", () => {
  it("holds PAGE_BYTES of lines past its first event, across segments; reading on gives every event once", async () => {
    const log = await JsonlEventLog.open(tmp.file, "s1");
    const written: SessionEvent[] = [];
    for (let i = 0; i < 8; i++) {
      const text = `${i}`.padEnd(EVENT_BYTES, "x");
      written.push(...(await log.append([{ type: "user.prompt", turn: `t${i}`, data: { text } }])));
    }
    try {
      expect((await listSealed(tmp.file)).length).toBeGreaterThan(0);
      const live = await pages((after) => log.read(after, 1000));
      expect(live.all).toEqual(written);
      expect(Math.max(...live.sizes)).toBeLessThan(written.length);
      expect(await log.read(0)).toEqual(written);
    } finally {
      await log.close();
    }
    const file = await pages((after) => readEventsFile(tmp.file, undefined, { after, limit: 1000 }));
    expect(file.all).toEqual(written);
    expect(Math.max(...file.sizes)).toBeLessThan(written.length);
    expect(await readEventsFile(tmp.file)).toEqual(written);
  });

  it("still holds an event larger than PAGE_BYTES, alone", async () => {
    const log = await JsonlEventLog.open(tmp.file, "s1");
    try {
      const text = "y".padEnd(PAGE_BYTES + 1, "y");
      const [big] = await log.append([{ type: "user.prompt", turn: "t", data: { text } }]);
      const [after] = await log.append([{ type: "user.prompt", turn: "t", data: { text: "next" } }]);
      expect(await log.read(0, 10)).toEqual([big]);
      expect(await log.read(big!.seq, 10)).toEqual([after]);
    } finally {
      await log.close();
    }
  });
});
