// A page of the cluster log (a read with a limit) is bounded in bytes as well as events, as the embedded log's is:
// a log of large events read a thousand at a time would otherwise be held whole by each watcher catching up.
import { describe, expect, it } from "vitest";
import { PAGE_BYTES } from "../../core/event-log.js";
import type { NewEvent, SessionEvent } from "../../protocol/events.js";
import { useNatsCluster } from "../../testing/nats-bed.js";

const nats = useNatsCluster();
const text = (e: SessionEvent) => (e.data as { text: string }).text;

describe("a NATS log page", () => {
  it("ends past PAGE_BYTES, and reading on from its last event gives every event once", async () => {
    const [a, b] = await nats.twoNodes("page", { leases: false });
    await a.store.create({ harness: "process", config: { model: "m1" }, id: "big" });
    const writer = await a.store.openLog("big");
    const size = 512 * 1024;
    const count = Math.ceil((PAGE_BYTES * 1.5) / size);
    for (let i = 0; i < count; i++) {
      const event = { type: "assistant.delta", turn: "t1", data: { text: `${i}`.padEnd(size, "x") } };
      await writer.append([event as NewEvent]);
    }
    const log = await b.store.openLog("big");
    const first = await log.read(0, 1000);
    expect(first.length).toBeLessThan(count);
    expect(first.slice(0, -1).reduce((n, e) => n + text(e).length, 0)).toBeLessThan(PAGE_BYTES);
    const all = [...first];
    while (all.length < count) {
      const page = await log.read(all.at(-1)!.seq, 1000);
      expect(page.length).toBeGreaterThan(0);
      all.push(...page);
    }
    expect(all.map((e) => e.seq)).toEqual(Array.from({ length: count }, (_, i) => i + 1));
    expect((await log.read(0)).length).toBe(count); // no limit: the whole log, as before
  }, 120_000);
});
