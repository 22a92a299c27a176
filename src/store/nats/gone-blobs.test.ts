// A checkpoint blob whose object NATS still describes but whose bytes it no longer holds (its chunks purged by an
// operator's limits on the object store's stream, or by the session's removal while another node read it).
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { useNatsCluster } from "../../testing/nats-bed.js";
import { ReplicatedCheckpoints } from "./checkpoints.js";

const base = { harness: "process", config: { model: "m1" } };
const nats = useNatsCluster();

type Node = Awaited<ReturnType<typeof nats.twoNodes>>[number];

/** Session `id` on node `a` with one checkpoint of one blob; `purge` drops that blob's chunks from NATS. */
async function oneBlobCheckpoint(a: Node, id: string) {
  await a.store.create({ ...base, id });
  const native = a.store.paths(id).native;
  await mkdir(native, { recursive: true });
  await writeFile(path.join(native, "state.txt"), "v1");
  const made = await a.store
    .checkpoints(id)
    .create(native, [{ path: "state.txt", size: 2, append_only: false }]);
  const blob = made.files[0]!.segments[0]!.blob;
  const info = await a.ctx.blobs.info(`${id}/blobs/${blob}`);
  const stream = (await a.ctx.blobs.status()).streamInfo.config.name;
  const chunks = `$O.${info!.bucket}.C.${info!.nuid}`;
  const purge = () => a.ctx.jsm.streams.purge(stream, { filter: chunks });
  return { made, blob, chunks, purge };
}

describe("cluster checkpoint blobs gone from NATS", () => {
  it("fails a restore whose blob has no bytes left in NATS, naming it, instead of waiting for them forever", async () => {
    const [a, b] = await nats.twoNodes("cpg", { leases: false });
    const { made, blob, purge } = await oneBlobCheckpoint(a, "s1");
    await purge();
    const into = path.join(b.home, "restored");
    const failed = await b.store
      .checkpoints("s1")
      .restore(made.id, into)
      .catch((err: Error) => err);
    expect(failed).toBeInstanceOf(Error);
    expect((failed as Error).message).toContain(blob);
  });

  it("fails a restore whose blob's chunks go after they were counted, naming it, instead of waiting forever", async () => {
    const [a, b] = await nats.twoNodes("cpg", { leases: false });
    const { made, blob, chunks, purge } = await oneBlobCheckpoint(a, "s2");
    // node-b's real client, whose consumer of the blob's chunks is made only once they are purged (after they were
    // counted); the index and manifest are read through consumers too.
    const consumers = new Proxy(b.ctx.js.consumers, {
      get(target, prop) {
        const value = Reflect.get(target, prop, target);
        if (prop !== "get") return typeof value === "function" ? value.bind(target) : value;
        return async (...args: unknown[]) => {
          if ((args[1] as { filter_subjects?: string } | undefined)?.filter_subjects === chunks)
            await purge();
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
    const js = new Proxy(b.ctx.js, {
      get: (target, prop) => (prop === "consumers" ? consumers : Reflect.get(target, prop, target)),
    });
    const cache = path.join(b.home, "cache-s2");
    const reader = new ReplicatedCheckpoints(b.ctx.blobs, "s2", cache, js, b.ctx.records, {
      chunkWaitMs: 200,
    });
    const failed = await reader.restore(made.id, path.join(b.home, "restored")).catch((err: Error) => err);
    expect(failed).toBeInstanceOf(Error);
    expect((failed as Error).message).toContain(`s2/blobs/${blob}`);
  });
});
