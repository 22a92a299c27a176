// Cluster checkpoints whose objects in NATS are damaged: they fail what reads them, never the session's removal.
import { describe, expect, it } from "vitest";
import { useNatsCluster } from "../../testing/nats-bed.js";

const base = { harness: "process", config: { model: "m1" } };
const nats = useNatsCluster();

describe("damaged cluster checkpoints", () => {
  it("removes a session whose checkpoint manifest in NATS is not one", async () => {
    const [a] = await nats.twoNodes("cpd", { leases: false });
    for (const [id, damaged] of [
      ["s1", "not json"],
      ["s2", "{}"],
      ["s3", '{"files":[{"segments":7}]}'],
    ] as const) {
      await a.store.create({ ...base, id });
      await a.ctx.blobs.putBlob({ name: `${id}/index` }, Buffer.from(JSON.stringify(["000001"])));
      await a.ctx.blobs.putBlob({ name: `${id}/manifests/000001.json` }, Buffer.from(damaged));
      await a.store.remove(id);
      expect(await a.store.get(id)).toBeUndefined();
      expect(await a.ctx.blobs.getBlob(`${id}/index`)).toBeNull();
      expect(await a.ctx.blobs.getBlob(`${id}/manifests/000001.json`)).toBeNull();
    }
  });

  it("names the damaged list of checkpoint ids and how to fix it, and still removes the session", async () => {
    const [a] = await nats.twoNodes("cpd", { leases: false });
    await a.store.create({ ...base, id: "s4" });
    await a.ctx.records.put("s4.checkpoints", "not json");
    const failed = await a.store
      .checkpoints("s4")
      .list()
      .catch((err: Error) => err);
    expect((failed as Error).message).toMatch(/key s4\.checkpoints of bucket \S+\) is damaged/);
    expect((failed as Error).message).toContain("nats kv del");
    await a.store.remove("s4");
    expect((await a.ctx.records.get("s4.checkpoints"))?.operation).not.toBe("PUT");
  });
});
