// A record in the cluster's records bucket written by a node of a newer version (a rolling upgrade) holds fields
// an older node does not know: the older node reads it (get and list), not as damaged, and its update writes them
// back, so the newer node does not find its field dropped; so does its reservation of a checkpoint id. On a real
// nats-server.
import { describe, expect, it } from "vitest";
import { useNatsCluster } from "../../testing/nats-bed.js";
import type { TestNode } from "../../testing/nats-store.js";
import { idsKey, reservedIds, reserveId } from "./checkpoint-ids.js";

const nats = useNatsCluster();
const base = { harness: "process", config: { model: "m1" } };

async function stored(node: TestNode, id: string): Promise<Record<string, unknown>> {
  return (await node.ctx.records.get(id))?.json() ?? {};
}

describe("a cluster session record with fields a newer node wrote", () => {
  it("is read and listed without them, and another node's update keeps them", async () => {
    const [a, b] = await nats.twoNodes("newer", { leases: false });
    const { id } = await a.store.create({ ...base, tenant: "t", pinned: { node: "node-a", reason: "r" } });
    const newer = {
      ...(await stored(a, id)),
      future: "kept",
      pinned: { node: "node-a", reason: "r", since: 3 },
    };
    await a.ctx.records.put(id, JSON.stringify(newer));

    const read = await b.store.get(id);
    expect(read).not.toHaveProperty("future");
    expect(read?.pinned).toEqual({ node: "node-a", reason: "r" });
    const unreadable: string[] = [];
    expect((await b.store.list((s) => unreadable.push(s.id), "t")).map((s) => s.id)).toEqual([id]);
    expect(unreadable).toEqual([]);

    const updated = await b.store.update(id, { status: "closed" });
    expect(updated).not.toHaveProperty("future");
    expect(await stored(a, id)).toEqual({ ...newer, status: "closed" });
    await b.store.update(id, { pinned: undefined });
    const { pinned: _, ...unpinned } = newer;
    expect(await stored(a, id)).toEqual({ ...unpinned, status: "closed" });
  });

  it("keeps a newer node's fields beside a session's reserved checkpoint ids when it reserves one", async () => {
    const [a] = await nats.twoNodes("newer-ids", { leases: false });
    const newer = { runs: [[1, 2]], by: "newer-node", future: { kept: true } };
    await a.ctx.records.put(idsKey("s1"), JSON.stringify(newer));
    expect(await reserveId(a.ctx.records, "s1", 3)).toBe("000003");
    const written = (await a.ctx.records.get(idsKey("s1")))?.json<Record<string, unknown>>();
    expect(written).toMatchObject({ runs: [[1, 3]], future: { kept: true } });
    expect(await reservedIds(a.ctx.records, "s1")).toEqual(["000001", "000002", "000003"]);
  });
});
