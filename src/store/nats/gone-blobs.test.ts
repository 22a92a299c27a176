// A checkpoint blob whose object NATS still describes but whose bytes it no longer holds (its chunks purged by an
// operator's limits on the object store's stream, or by the session's removal while another node read it).
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { useNatsCluster } from "../../testing/nats-bed.js";

const base = { harness: "process", config: { model: "m1" } };
const nats = useNatsCluster();

describe("cluster checkpoint blobs gone from NATS", () => {
  it("fails a restore whose blob has no bytes left in NATS, naming it, instead of waiting for them forever", async () => {
    const [a, b] = await nats.twoNodes("cpg", { leases: false });
    await a.store.create({ ...base, id: "s1" });
    const native = a.store.paths("s1").native;
    await mkdir(native, { recursive: true });
    await writeFile(path.join(native, "state.txt"), "v1");
    const made = await a.store
      .checkpoints("s1")
      .create(native, [{ path: "state.txt", size: 2, append_only: false }]);
    const blob = made.files[0]!.segments[0]!.blob;
    const info = await a.ctx.blobs.info(`s1/blobs/${blob}`);
    const stream = (await a.ctx.blobs.status()).streamInfo.config.name;
    await a.ctx.jsm.streams.purge(stream, { filter: `$O.${info!.bucket}.C.${info!.nuid}` });
    const into = path.join(b.home, "restored");
    const failed = await b.store
      .checkpoints("s1")
      .restore(made.id, into)
      .catch((err: Error) => err);
    expect(failed).toBeInstanceOf(Error);
    expect((failed as Error).message).toContain(blob);
  });
});
