// A tenant's list of the cluster store looks only at its own sessions: the view of the records bucket keeps them by
// tenant, and the full read (the view behind) checks and keeps only the tenant's records. Counted by the records
// each list looks at, on a real nats-server; the list is exactly the tenant's, in order, whatever another holds.
import { afterEach, describe, expect, it } from "vitest";
import type { UnreadableSession } from "../../core/store.js";
import { useNatsCluster } from "../../testing/nats-bed.js";
import type { TestNode } from "../../testing/nats-store.js";
import { storedRevision } from "./record-gaps.js";
import { readAllSummaries } from "./record-read.js";
import { bucketState, RecordView } from "./record-view.js";

const base = { harness: "process", config: { model: "m1" } };
const nats = useNatsCluster();

let closing: (() => void)[] = [];
afterEach(() => {
  for (const close of closing.reverse()) close();
  closing = [];
});

/** a's sessions among many more of b's, and a damaged record each, made on node-b. */
async function twoTenants(b: TestNode): Promise<{ mine: string[]; theirs: string[] }> {
  const mine: string[] = [];
  const theirs: string[] = [];
  for (let i = 0; i < 60; i++) {
    if (i % 20 === 5) mine.push((await b.store.create({ ...base, id: `a${i}`, tenant: "a" })).id);
    theirs.push((await b.store.create({ ...base, id: `b${i}`, tenant: "b" })).id);
  }
  await b.ctx.records.put("bad-a", JSON.stringify({ id: "bad-a", tenant: "a", harness: 7 }));
  await b.ctx.records.put("bad-b", "{not json"); // names no tenant: the default tenant's
  return { mine, theirs };
}

/** A view of node-a's records bucket whose lists tell it each record they look at. */
function view(node: TestNode, looked: (id: string) => void): RecordView {
  const records = node.ctx.records;
  const made = new RecordView({
    watch: () => records.watch(),
    bucket: () => bucketState(records),
    revision: (seq) => storedRevision(records, seq),
    catchUpMs: 30_000,
    warn: () => {},
    looked,
  });
  closing.push(() => made.close());
  return made;
}

describe("one tenant's list of the cluster store", () => {
  it("from the view: looks at the tenant's records alone, and lists exactly them, oldest first", async () => {
    const [a, b] = await nats.twoNodes("tenants");
    const { mine, theirs } = await twoTenants(b);
    const looked = new Set<string>();
    const records = view(a, (id) => looked.add(id));
    const told: UnreadableSession[] = [];
    expect((await records.list((s) => told.push(s), "a"))?.map((s) => s.id)).toEqual(mine);
    expect(told.map((s) => s.id)).toEqual(["bad-a"]);
    expect([...looked].sort()).toEqual([...mine, "bad-a"].sort());
    // A change to b's sessions is b's: a's next list still looks at a's alone.
    looked.clear();
    await b.store.update(theirs[0]!, { status: "closed" });
    await b.store.remove(theirs[1]!);
    expect((await records.list(() => {}, "a"))?.map((s) => s.id)).toEqual(mine);
    expect([...looked].sort()).toEqual([...mine, "bad-a"].sort());
    const bs = await records.list(undefined, "b");
    expect(bs?.map((s) => s.id)).toEqual(theirs.filter((id) => id !== theirs[1]));
    expect(bs?.[0]?.status).toBe("closed");
    // A damaged record that names no tenant is the default tenant's, and fails only a list that could show it.
    await expect(records.list(undefined, "default")).rejects.toThrow(/session bad-b/);
  });

  it("from the full read: checks and keeps the tenant's records alone", async () => {
    const [a, b] = await nats.twoNodes("tenants");
    const { mine } = await twoTenants(b);
    const checked = new Set<string>();
    const told: UnreadableSession[] = [];
    const entry = (id: string) => a.ctx.records.get(id).then((e) => e ?? undefined);
    const listed = await readAllSummaries(
      a.ctx.records,
      entry,
      (s) => told.push(s),
      "a",
      (id) => checked.add(id),
    );
    expect(listed.map((s) => s.id)).toEqual(mine);
    expect(told.map((s) => s.id)).toEqual(["bad-a"]);
    expect([...checked].sort()).toEqual([...mine, "bad-a"].sort());
    // Through the store with its view closed (what a list does when the view is behind): the same answer.
    await a.store.close();
    expect((await a.store.list(() => {}, "a")).map((s) => s.id)).toEqual(mine);
  });

  it("lists a session made again under another tenant's name by its new tenant alone", async () => {
    const [a, b] = await nats.twoNodes("tenants");
    const records = view(a, () => {});
    await b.store.create({ ...base, id: "x1", tenant: "a" });
    expect((await records.list(undefined, "a"))?.map((s) => s.id)).toEqual(["x1"]);
    await b.store.remove("x1");
    await b.store.create({ ...base, id: "x1", tenant: "b" });
    expect(await records.list(undefined, "a")).toEqual([]);
    expect((await records.list(undefined, "b"))?.map((s) => s.id)).toEqual(["x1"]);
  });
});
