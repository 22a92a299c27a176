// What only the cluster store has: several nodes on one stream. A stale writer is fenced by the expected
// sequence, any node reads and follows any session's log, checkpoints made on one node restore on another,
// and a NATS node killed mid-stream costs no acknowledged event and doubles none.
import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { BrainError } from "../../core/errors.js";
import type { NewEvent, SessionEvent } from "../../protocol/events.js";
import { useNatsCluster } from "../../testing/nats-bed.js";

const base = { harness: "process", config: { model: "m1" } };
const delta = (text: string): NewEvent =>
  ({ type: "assistant.delta", turn: "t1", data: { text } }) as NewEvent;

const nats = useNatsCluster();
const twoNodes = (leases = true) => nats.twoNodes("log", { leases });

async function until<T>(what: string, fn: () => T | undefined, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = fn();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe("NATS event log across nodes", () => {
  it("fences a stale writer: its append after another writer's is refused, coded locked", async () => {
    const [a, b] = await twoNodes(false);
    await a.store.create({ ...base, id: "s1" });
    const stale = await a.store.openLog("s1");
    const fresh = await b.store.openLog("s1");
    await fresh.append([delta("from b")]);
    const refused = await stale.append([delta("from a")]).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(BrainError);
    expect((refused as BrainError).code).toBe("locked");
    expect((refused as BrainError).message).toMatch(/no longer owns/);
    // Once fenced it stays fenced: nothing it writes later can land after the other writer's events.
    expect(((await stale.append([delta("again")]).catch((e: BrainError) => e)) as BrainError).code).toBe(
      "locked",
    );
    await fresh.append([delta("b again")]);
    const events = await b.store.readEvents("s1");
    expect(events.map((e) => [e.seq, (e.data as { text: string }).text])).toEqual([
      [1, "from b"],
      [2, "b again"],
    ]);
  });

  it("reads from any seq on another node, and follows live from a cursor", async () => {
    const [a, b] = await twoNodes();
    await a.store.create({ ...base, id: "s2" });
    const log = await a.store.openLog("s2");
    for (let i = 0; i < 20; i++)
      await Promise.all([log.append([delta(`${i}a`)]), log.append([delta(`${i}b`)])]);
    for (const after of [0, 1, 2, 17, 39]) {
      const events = await b.store.readEvents("s2").then((all) => all.filter((e) => e.seq > after));
      expect(events.map((e) => e.seq)).toEqual(Array.from({ length: 40 - after }, (_, i) => after + i + 1));
    }
    const seen: SessionEvent[] = [];
    const stop = await b.store.follow("s2", 35, (events) => seen.push(...events));
    await until("the replay", () => (seen.length >= 5 ? true : undefined));
    await log.append([delta("live")]);
    await until("the live event", () => (seen.length >= 6 ? true : undefined));
    stop();
    expect(seen.map((e) => e.seq)).toEqual([36, 37, 38, 39, 40, 41]);
    await log.close();
    // A reopen reads from NATS (its memory of recent events is gone): the same answers.
    const again = await a.store.openLog("s2");
    expect((await again.read(30, 3)).map((e) => e.seq)).toEqual([31, 32, 33]);
    await again.close();
  });

  it("reads from any seq when other sessions' messages sit between a session's own", async () => {
    const [a, b] = await twoNodes();
    const ids = ["i1", "i2", "i3"];
    const logs = [];
    for (const id of ids) {
      await a.store.create({ ...base, id });
      logs.push(await a.store.openLog(id));
    }
    for (let i = 0; i < 25; i++) {
      for (const [k, log] of logs.entries()) {
        // Uneven: the sessions' messages interleave with gaps of every size.
        for (let j = 0; j <= (i + k) % 3; j++) await log.append([delta(`${i}.${j}`)]);
      }
    }
    for (const [k, id] of ids.entries()) {
      const all = await b.store.readEvents(id);
      const count = logs[k]!.lastSeq;
      expect(all.map((e) => e.seq)).toEqual(Array.from({ length: count }, (_, i) => i + 1));
      await logs[k]!.close();
      const again = await a.store.openLog(id);
      for (const after of [0, 1, 7, 20, count - 1, count]) {
        expect((await again.read(after, 5)).map((e) => e.seq)).toEqual(
          all
            .filter((e) => e.seq > after)
            .slice(0, 5)
            .map((e) => e.seq),
        );
      }
      await again.close();
    }
  });

  it("restores on one node a checkpoint made on another", async () => {
    const [a, b] = await twoNodes();
    await a.store.create({ ...base, id: "s3" });
    const native = a.store.paths("s3").native;
    await mkdir(native, { recursive: true });
    await writeFile(path.join(native, "log.jsonl"), "one\n");
    const files = [{ path: "log.jsonl", size: 4, append_only: true }];
    await a.store.checkpoints("s3").create(native, files);
    await writeFile(path.join(native, "log.jsonl"), "one\ntwo\n");
    files[0]!.size = 8;
    const m2 = await a.store.checkpoints("s3").create(native, files);
    const into = path.join(b.home, "restored");
    await b.store.checkpoints("s3").restore("latest", into);
    expect(await readFile(path.join(into, "log.jsonl"), "utf8")).toBe("one\ntwo\n");
    expect(await b.store.checkpoints("s3").list()).toEqual(["000001", m2.id]);
  });

  it("keeps every acknowledged event, once, when a NATS node is killed mid-stream", async () => {
    const [a, b] = await twoNodes();
    await a.store.create({ ...base, id: "s4" });
    const log = await a.store.openLog("s4");
    const acked: number[] = [];
    for (let i = 0; i < 150; i++) {
      if (i === 50) nats.cluster.kill(0);
      const [e] = await log.append([delta(String(i))]);
      acked.push(e!.seq);
    }
    nats.cluster.start(0);
    expect(acked).toEqual(Array.from({ length: 150 }, (_, i) => i + 1));
    const stored = await b.store.readEvents("s4");
    expect(stored.map((e) => (e.data as { text: string }).text)).toEqual(acked.map((s) => String(s - 1)));
    await log.close();
  }, 120_000);
});
