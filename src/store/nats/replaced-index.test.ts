// A checkpoint object read while another node replaces it: the index object is written again by every checkpoint
// a session takes, and a read of it (a list, a limit's count of the checkpoints' bytes) that looked the object up
// just before the write asked for chunks NATS then purged. ObjectStore.getBlob waits for those for ever: seen as a
// prompt or checkpoint of a session at its log-bytes bound that never answered while its after-turn checkpoint ran.
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import type { ObjectStore } from "@nats-io/obj";
import { describe, expect, it } from "vitest";
import { sleep } from "../../core/sleep.js";
import { useNatsCluster } from "../../testing/nats-bed.js";
import { ReplicatedCheckpoints } from "./checkpoints.js";

const nats = useNatsCluster();

describe("cluster checkpoint objects replaced while read", () => {
  it("lists the checkpoints when the index is written again between its look-up and its read", async () => {
    const [a, b] = await nats.twoNodes("cpr", { leases: false });
    await a.store.create({ harness: "process", config: {}, id: "s1" });
    const native = a.store.paths("s1").native;
    await mkdir(native, { recursive: true });
    const checkpoint = async (text: string) => {
      await writeFile(path.join(native, "state.txt"), text);
      return a.store.checkpoints("s1").create(native, [{ path: "state.txt", size: 2, append_only: false }]);
    };
    const first = await checkpoint("v1");
    // node-b's real object store, whose first look-up of the index is answered only once node-a has written the
    // index again (its second checkpoint): the read that follows is of the object as it was looked up.
    let second: Promise<{ id: string }> | undefined;
    const objects = new Proxy(b.ctx.blobs, {
      get(target, prop) {
        const value = Reflect.get(target, prop, target);
        if (prop !== "rawInfo") return value;
        return async (name: string) => {
          const info = await (value as (n: string) => Promise<unknown>).call(target, name);
          if (name === "s1/index" && !second) {
            second = checkpoint("v2");
            await second;
          }
          return info;
        };
      },
    }) as ObjectStore;
    const reader = new ReplicatedCheckpoints(
      objects,
      "s1",
      path.join(b.home, "cache"),
      b.ctx.js,
      b.ctx.records,
    );
    const listed = await Promise.race([reader.list(), sleep(10_000).then(() => "the list never ended")]);
    expect(second).toBeDefined();
    // The index as written again: both checkpoints.
    expect(listed).toEqual([first.id, (await second!).id]);
  });
});
