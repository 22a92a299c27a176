// The cluster store lists from a watch of the records bucket (./record-view.ts): what another node writes shows
// in the next list without a read per record, a bad record fails the list as the full read does, and a broken
// watch never answers stale: the list reads every record instead, says so once, and the view watches again.
// A record stored though NATS's answer to its create was lost is that create's.
import { type NatsConnection, TimeoutError } from "@nats-io/transport-node";
import { afterEach, describe, expect, it } from "vitest";
import { BrainError } from "../../core/errors.js";
import type { UnreadableSession } from "../../core/store.js";
import { useNatsCluster } from "../../testing/nats-bed.js";
import type { TestNode } from "../../testing/nats-store.js";
import { listedIds, watchedView } from "../../testing/record-views.js";
import { NatsSessionStore } from "./session-store.js";

const base = { harness: "process", config: { model: "m1" } };
const nats = useNatsCluster();

let closing: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closing.reverse()) await close();
  closing = [];
});

/** A second store on node-a's connection that lists from its own view, its warnings kept. */
function lister(node: TestNode, listCatchUpMs = 30_000): { store: NatsSessionStore; warnings: string[] } {
  const warnings: string[] = [];
  const warn = (message: string) => warnings.push(message);
  const store = new NatsSessionStore(node.ctx, {
    home: node.home,
    holder: { node: "lister" },
    listCatchUpMs,
    warn,
  });
  closing.push(() => store.close());
  return { store, warnings };
}

/** Counts the per-record reads of the sessions bucket (STREAM.MSG.GET requests), seen from another connection. */
async function countRecordReads(node: TestNode): Promise<{ count(): Promise<number> }> {
  const watcher: NatsConnection = await nats.cluster.connect("counter");
  closing.push(() => watcher.close());
  const stream = (await node.ctx.records.status()).streamInfo.config.name;
  let reads = 0;
  watcher.subscribe(`$JS.API.STREAM.MSG.GET.${stream}`, {
    callback: () => {
      reads++;
    },
  });
  await watcher.flush();
  return {
    async count() {
      await watcher.flush();
      return reads;
    },
  };
}

const ids = async (store: NatsSessionStore) => (await store.list()).map((r) => r.id);

describe("listing cluster sessions from a watch of the records bucket", () => {
  it("shows another node's creates, updates and deletes, with no read per record", async () => {
    const [a, b] = await nats.twoNodes("view");
    for (const id of ["w1", "w2", "w3"]) await b.store.create({ ...base, id });
    const w2 = await b.store.get("w2"); // the whole record: a list gives summaries
    const { store, warnings } = lister(a);
    const reads = await countRecordReads(a);
    expect(await ids(store)).toEqual(["w1", "w2", "w3"]); // the watch's first values
    // Written on node-b's connection straight into the bucket: the store's update and remove read records too.
    await b.store.create({ ...base, id: "w4" });
    await b.ctx.records.put("w2", JSON.stringify({ ...w2, status: "closed" }));
    await b.ctx.records.delete("w1");
    const listed = await store.list();
    expect(listed.map((r) => r.id)).toEqual(["w2", "w3", "w4"]);
    expect(listed.find((r) => r.id === "w2")?.status).toBe("closed");
    expect(listed[0]).not.toHaveProperty("config"); // summaries: a view holds no session's config
    // It keeps each record's size (for the tenant byte bound, a record holds its config), the rewritten one's too.
    const viewed = await Promise.all(["w2", "w3", "w4"].map((id) => store.recordBytes(id)));
    // The old list read each record (4 reads for the 4 listed above); the view reads none.
    expect(await reads.count()).toBe(0);
    expect(warnings).toEqual([]);
    const stored = await Promise.all(
      ["w2", "w3", "w4"].map(async (id) => (await b.ctx.records.get(id))?.length),
    );
    expect(viewed).toEqual(stored);
    expect(viewed[0]).toBe(Buffer.byteLength(JSON.stringify({ ...w2, status: "closed" })));
  });

  it("fails a list on a bad record as the full read does, naming the session, and lists again once it is gone", async () => {
    const [a] = await nats.twoNodes("view");
    await a.store.create({ ...base, id: "ok1" });
    const { store } = lister(a);
    expect(await ids(store)).toEqual(["ok1"]);
    await a.ctx.records.put("bad1", "{not json");
    const refused = await store.list().catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(BrainError);
    expect(refused).toMatchObject({ code: "brain_error" });
    expect((refused as Error).message).toMatch(/session bad1: record is not valid JSON/);
    await a.ctx.records.put("bad1", JSON.stringify({ id: "bad1" }));
    expect(String(await store.list().catch((err: unknown) => err))).toMatch(/session bad1: record field "/);
    await a.ctx.records.delete("bad1");
    expect(await ids(store)).toEqual(["ok1"]);
  });

  it("tells a list that asks of a bad record, with the fix, from the view and from the full read alike", async () => {
    const [a] = await nats.twoNodes("view");
    const ok = await a.store.create({ ...base, id: "ok1" });
    await a.ctx.records.put("bad1", "{not json");
    // Parses, but is no record: it still says whose it is and when it was made.
    await a.ctx.records.put("bad2", JSON.stringify({ ...ok, id: "bad2", tenant: "acme", harness: 7 }));
    const viewed: UnreadableSession[] = [];
    expect((await lister(a).store.list((s) => viewed.push(s))).map((r) => r.id)).toEqual(["ok1"]);
    const reader = lister(a).store;
    await reader.close(); // no view: every record is read
    const read: UnreadableSession[] = [];
    expect((await reader.list((s) => read.push(s))).map((r) => r.id)).toEqual(["ok1"]);
    for (const told of [viewed, read]) {
      expect(told.sort((x, y) => x.id.localeCompare(y.id))).toEqual([
        {
          id: "bad1",
          created_at: expect.any(String),
          undated: true,
          error: expect.stringMatching(
            /^session bad1: record is not valid JSON.*; repair it .*DELETE \/v1\/sessions\/bad1/,
          ),
        },
        {
          id: "bad2",
          created_at: ok.created_at,
          tenant: "acme",
          error: expect.stringMatching(/^session bad2: record .*harness.*nats kv put \S+ bad2/),
        },
      ]);
    }
  });

  it("removes a session whose record is damaged with its log, as the fix it names says", async () => {
    const [a] = await nats.twoNodes("view");
    await a.store.create({ ...base, id: "bad3" });
    const log = await a.store.openLog("bad3");
    await log.append([{ type: "session.closed", data: {} }]);
    await log.close();
    await a.ctx.records.put("bad3", "{not json");
    await a.store.remove("bad3");
    expect(await a.store.get("bad3")).toBeUndefined();
    expect(await a.store.readEvents("bad3")).toEqual([]);
  });

  it("answers a list correctly while its watch is broken (its consumer deleted), and again after", async () => {
    const [a, b] = await nats.twoNodes("view");
    await b.store.create({ ...base, id: "x1" });
    const { store } = lister(a, 1000);
    expect(await ids(store)).toEqual(["x1"]);
    // The watch's consumer goes away on the server: nothing more is delivered to the view until the client
    // notices missed heartbeats, so the next list may not answer from it (never stale, whichever way it answers).
    const stream = (await a.ctx.records.status()).streamInfo.config.name;
    for await (const consumer of a.ctx.jsm.consumers.list(stream)) {
      await a.ctx.jsm.consumers.delete(stream, consumer.name);
    }
    await b.store.create({ ...base, id: "x2" });
    await b.store.remove("x1");
    expect(await ids(store)).toEqual(["x2"]);
    await b.store.create({ ...base, id: "x3" });
    expect(await ids(store)).toEqual(["x2", "x3"]);
  });

  it("stops watching when the store closes", async () => {
    const [a] = await nats.twoNodes("view");
    const { store } = lister(a);
    await store.list();
    const stream = (await a.ctx.records.status()).streamInfo.config.name;
    const bound = async () => {
      let n = 0;
      for await (const c of a.ctx.jsm.consumers.list(stream)) if (c.push_bound) n++;
      return n;
    };
    // The server reports a consumer's interest once the subscription reaches it, both ways: look until then
    // (bounded); under load the first look can come before it.
    const until = async (count: number) => {
      for (let i = 0; i < 100 && (await bound()) !== count; i++) await new Promise((r) => setTimeout(r, 100));
    };
    await until(1);
    expect(await bound()).toBe(1);
    await store.close();
    await a.nc.flush();
    await until(0);
    expect(await bound()).toBe(0);
  });
});

describe("a record written while NATS's answer was lost", () => {
  /** A store on node-a whose records bucket stores `method`'s writes but never answers them (a leader election). */
  async function lossyStore(cluster: string, method: "create" | "update") {
    const [a] = await nats.twoNodes(cluster);
    const records = a.ctx.records;
    const write = records[method].bind(records) as (...args: unknown[]) => Promise<unknown>;
    const lossy = Object.create(records, {
      [method]: {
        value: async (...args: unknown[]) => {
          await write(...args);
          throw new TimeoutError();
        },
      },
    });
    const store = new NatsSessionStore(
      { ...a.ctx, records: lossy },
      { home: a.home, holder: { node: "node-a" } },
    );
    closing.push(() => store.close());
    return { store, other: a.store };
  }

  it("a create is created: the record stored is this create's own", async () => {
    const { store, other } = await lossyStore("lost", "create");
    const made = await store.create({ ...base, id: "lost1" });
    expect(await other.get("lost1")).toEqual(made);
    // Another create of that id is still refused: it is not this one's record.
    const again = await store.create({ ...base, id: "lost1" }).catch((err: BrainError) => err);
    expect((again as BrainError).message).toBe("session lost1 already exists");
  });

  it("an update is updated: the record stored is this update's own", async () => {
    const { store, other } = await lossyStore("lost-update", "update");
    await store.create({ ...base, id: "lost2" });
    const updated = await store.update("lost2", { status: "closed" });
    expect(updated.status).toBe("closed");
    expect(await other.get("lost2")).toEqual(updated);
  });
});

describe("RecordView", () => {
  it("waits for the first values, even of an empty bucket", async () => {
    const [a, b] = await nats.twoNodes("view");
    const empty = watchedView(a.ctx.records);
    expect(await empty.view.list()).toEqual([]);
    for (const id of ["f1", "f2"]) await b.store.create({ ...base, id });
    const full = watchedView(a.ctx.records);
    expect(listedIds(await full.view.list())).toEqual(["f1", "f2"]);
    expect(listedIds(await empty.view.list())).toEqual(["f1", "f2"]);
  });

  it("when its watch ends, has the list read in full (said once) and watches again", async () => {
    const [a, b] = await nats.twoNodes("view");
    await b.store.create({ ...base, id: "e1" });
    const { view, watches, warnings } = watchedView(a.ctx.records);
    expect(listedIds(await view.list())).toEqual(["e1"]);
    watches[0]!.stop();
    await b.store.create({ ...base, id: "e2" });
    // Undefined: the caller reads every record (the store's full read); never the view as it stood.
    expect(await view.list()).toBeUndefined();
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(
      /cluster store: listing sessions by reading every record: .*the watch ended.*watching again/,
    );
    expect(listedIds(await view.list())).toEqual(["e1", "e2"]);
    expect(watches).toHaveLength(2);
    await b.store.remove("e1");
    expect(listedIds(await view.list())).toEqual(["e2"]);
    expect(warnings).toHaveLength(1);
  });

  it("answers nothing once closed", async () => {
    const [a] = await nats.twoNodes("view");
    const { view, watches } = watchedView(a.ctx.records);
    expect(await view.list()).toEqual([]);
    view.close();
    expect(await view.list()).toBeUndefined();
    expect(watches).toHaveLength(1);
  });
});
