// The view of the records bucket (./record-view.ts) does not trust its watch to deliver every revision, as
// nats-server 2.9.10 was seen to skip one (./record-gaps.ts): a skipped revision, a skipped last one, a value
// skipped among the first values or the last of them is read from the bucket, or the view watches again; no list
// answers without it.
import { Kvm } from "@nats-io/kv";
import { describe, expect, it, vi } from "vitest";
import { useNatsCluster } from "../../testing/nats-bed.js";
import { listedIds, watchedView } from "../../testing/record-views.js";
import { MAX_GAP_READS } from "./record-gaps.js";
import { bucketState } from "./record-view.js";

const base = { harness: "process", config: { model: "m1" } };
const nats = useNatsCluster();

describe("a view whose watch skips revisions", () => {
  it("reads the revisions its watch skipped from the bucket, so a delete it missed is not listed", async () => {
    const [a, b] = await nats.twoNodes("view");
    for (const id of ["g1", "g2", "g3"]) await b.store.create({ ...base, id });
    const dropped: number[] = [];
    const { view, warnings } = watchedView(a.ctx.records, (entry) => {
      const skip = entry.isUpdate && (entry.operation === "DEL" || entry.value.length === 1);
      if (skip) dropped.push(entry.revision);
      return skip;
    });
    expect(listedIds(await view.list())).toEqual(["g1", "g2", "g3"]);
    // The store's remove writes the record's delete marker between two purges of the session's other keys.
    await b.store.remove("g2");
    // A put never delivered, then gone from the bucket (it keeps one value a key): nothing to read, nothing lost.
    await b.ctx.records.put("g3.other", "x");
    await b.ctx.records.put("g3.other", "later");
    await b.store.create({ ...base, id: "g4" });
    expect(listedIds(await view.list())).toEqual(["g1", "g3", "g4"]);
    expect(dropped).toHaveLength(2);
    expect(warnings).toEqual([]);
  });

  it("never lists a key by its value from before a skipped revision that a write after the list's start replaced", async () => {
    const [a, b] = await nats.twoNodes("view");
    const made = await b.store.create({ ...base, id: "k1", harness: "v1" });
    const rewrite = (harness: string) => b.ctx.records.put("k1", JSON.stringify({ ...made, harness }));
    let release = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    // k1's v2 is skipped; k2's create, which shows the gap, is held until v3 has replaced v2 in the bucket. No
    // read of a quiet tail: the gap's fill alone answers the list.
    const { view, watches, warnings, asked } = watchedView(
      a.ctx.records,
      async (entry) => {
        if (entry.key === "k2") await released;
        return entry.key === "k1" && entry.string().includes('"harness":"v2"');
      },
      30_000,
      30_000,
    );
    expect(listedIds(await view.list())).toEqual(["k1"]);
    await rewrite("v2");
    await b.store.create({ ...base, id: "k2" });
    const asks = asked.length;
    const listing = view.list();
    await vi.waitFor(() => expect(asked.length).toBe(asks + 1)); // the list has the bucket's last revision
    await rewrite("v3"); // v2 is gone from the bucket (one value a key): the gap's read finds nothing of it
    release();
    const listed = await listing;
    expect(listed?.map((r) => [r.id, r.harness])).toEqual([
      ["k1", "v3"],
      ["k2", "process"],
    ]);
    expect(warnings).toEqual([]);
    expect(watches).toHaveLength(1);
  });

  it("reads the bucket's last revisions when its watch skipped them, not waiting for a later one to show the gap", async () => {
    const [a, b] = await nats.twoNodes("view");
    for (const id of ["t1", "t2"]) await b.store.create({ ...base, id });
    const start = (await bucketState(a.ctx.records)).lastRevision;
    const dropped: number[] = [];
    // The store's catch-up: a list that waits it out reads every record (undefined here) and watches again.
    const { view, watches, warnings } = watchedView(
      a.ctx.records,
      (entry) => {
        const skip = entry.revision > start;
        if (skip) dropped.push(entry.revision);
        return skip;
      },
      5000,
    );
    expect(listedIds(await view.list())).toEqual(["t1", "t2"]);
    // Each the bucket's last revision when listed: no later write shows the watch skipped it.
    await b.ctx.records.delete("t1");
    expect(listedIds(await view.list())).toEqual(["t2"]);
    await b.store.create({ ...base, id: "t3" });
    expect(listedIds(await view.list())).toEqual(["t2", "t3"]);
    const { lastRevision } = await bucketState(a.ctx.records);
    await vi.waitFor(() => expect(dropped).toEqual([lastRevision - 1, lastRevision]), { timeout: 10_000 });
    expect(warnings).toEqual([]);
    expect(watches).toHaveLength(1);
  });

  it("watches again when its first values lack a key's, which no gap shows, rather than list without it", async () => {
    const [a, b] = await nats.twoNodes("view");
    for (const id of ["c1", "c2", "c3"]) await b.store.create({ ...base, id });
    let dropped = 0;
    // The first watch never delivers c2's value, one of its first values (the others' revisions are either side).
    const { view, watches, warnings } = watchedView(a.ctx.records, (entry) => {
      const skip = watches.length === 1 && !entry.isUpdate && entry.key === "c2";
      if (skip) dropped++;
      return skip;
    });
    expect(await view.list()).toBeUndefined(); // read in full by the store
    expect(dropped).toBe(1);
    expect(warnings).toEqual([
      expect.stringMatching(
        /it skipped a value unseen: it holds 2 keys at revision \d+, the bucket 3\); watching again/,
      ),
    ]);
    expect(listedIds(await view.list())).toEqual(["c1", "c2", "c3"]);
    expect(watches).toHaveLength(2);
  });

  it("tells its first values lack a key's in a bucket of any history, which keeps more values than keys", async () => {
    const [a, b] = await nats.twoNodes("view");
    // An operator's bucket (the store keeps an existing bucket's history): five values a key.
    const records = await new Kvm(a.nc).create(nats.prefix("history5"), { history: 5 });
    for (const id of ["c1", "c2", "c3"])
      await records.put(id, JSON.stringify(await b.store.create({ ...base, id })));
    const [c1, c2] = [await b.store.get("c1"), await b.store.get("c2")];
    for (const harness of ["v2", "v3"]) await records.put("c1", JSON.stringify({ ...c1, harness }));
    expect((await bucketState(records)).values).toBe(5); // c1's three values, c2's and c3's
    // The first watch never delivers c2's value, one of its first values (c3's and c1's last come after it).
    const { view, watches, warnings } = watchedView(
      records,
      (entry) => watches.length === 1 && !entry.isUpdate && entry.key === "c2",
    );
    expect(await view.list()).toBeUndefined(); // read in full by the store
    expect(warnings).toEqual([
      expect.stringMatching(
        /it skipped a value unseen: it holds 2 keys at revision \d+, the bucket 3\); watching again/,
      ),
    ]);
    expect(listedIds(await view.list())).toEqual(["c1", "c2", "c3"]);
    // More values than keys, nothing skipped: answered from the view, no watch again.
    await records.put("c2", JSON.stringify({ ...c2, harness: "v2" }));
    expect((await view.list())?.map((r) => r.harness)).toEqual(["v3", "v2", "process"]);
    expect(watches).toHaveLength(2);
    expect(warnings).toHaveLength(1);
  });

  it("reads the values after its last when its watch skipped the last of its first values, which says they are in", async () => {
    const [a, b] = await nats.twoNodes("view");
    for (const id of ["d1", "d2", "d3"]) await b.store.create({ ...base, id });
    const dropped: boolean[] = [];
    const { view, watches, warnings } = watchedView(
      a.ctx.records,
      (entry) => {
        const skip = entry.key === "d3";
        if (skip) dropped.push(entry.isUpdate); // kv.watch() marks the last of the first values as an update
        return skip;
      },
      5000,
    );
    expect(listedIds(await view.list())).toEqual(["d1", "d2", "d3"]);
    expect(dropped).toEqual([true]);
    expect(warnings).toEqual([]);
    expect(watches).toHaveLength(1);
  });

  it("watches again rather than read a gap longer than it reads one by one", async () => {
    const [a, b] = await nats.twoNodes("view");
    await b.store.create({ ...base, id: "h1" });
    const dropped: number[] = [];
    const { view, watches, warnings } = watchedView(a.ctx.records, (entry) => {
      const skip = entry.isUpdate && entry.key.startsWith("h1.skip");
      if (skip) dropped.push(entry.revision);
      return skip;
    });
    expect(listedIds(await view.list())).toEqual(["h1"]);
    for (let i = 0; i <= MAX_GAP_READS; i++) await b.ctx.records.put(`h1.skip${i}`, "x");
    await b.store.create({ ...base, id: "h2" });
    expect(await view.list()).toBeUndefined(); // read in full by the store
    expect(dropped).toHaveLength(MAX_GAP_READS + 1);
    expect(warnings).toEqual([
      expect.stringContaining(
        `(it skipped revisions ${dropped[0]} to ${dropped.at(-1)} of the bucket); watching again`,
      ),
    ]);
    expect(listedIds(await view.list())).toEqual(["h1", "h2"]);
    expect(watches).toHaveLength(2);
  });
});
