// Cluster checkpoints whose manifest was written to a node's cache but never published: the cache must not pass
// it off as the checkpoint another node publishes under the same id.
import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { CheckpointStore } from "../../core/checkpoints/index.js";
import { BrainError } from "../../core/errors.js";
import type { NewEvent } from "../../protocol/events.js";
import { useNatsCluster } from "../../testing/nats-bed.js";
import type { TestNode } from "../../testing/nats-store.js";
import { ReplicatedCheckpoints } from "./checkpoints.js";

const base = { harness: "process", config: { model: "m1" } };
const nats = useNatsCluster();
const twoNodes = () => nats.twoNodes("cp", { leases: false });

describe("cluster checkpoints not published", () => {
  it("keeps no manifest of a checkpoint it could not publish: that id is the new owner's checkpoint", async () => {
    const [a, b] = await twoNodes();
    await a.store.create({ ...base, id: "s11" });
    const native = (node: TestNode) => node.store.paths("s11").native;
    const files = [{ path: "state.txt", size: 2, append_only: false }];
    for (const [node, state] of [[a, "v1"] as const, [b, "v2"] as const]) {
      await mkdir(native(node), { recursive: true });
      await writeFile(path.join(native(node), "state.txt"), state);
    }
    // node-a's lease runs out while its checkpoint is written: it holds as the checkpoint starts, not at the push.
    let checks = 0;
    const owns = () => {
      checks += 1;
      if (checks > 1) throw new BrainError("locked", "node-a no longer owns the session's log");
    };
    const cache = a.store.paths("s11").checkpoints;
    const lost = new ReplicatedCheckpoints(a.ctx.blobs, "s11", cache, a.ctx.js, a.ctx.records, { owns });
    await expect(lost.create(native(a), files)).rejects.toMatchObject({ code: "locked" });
    const made = await b.store.checkpoints("s11").create(native(b), files);
    expect(await a.store.checkpoints("s11").list()).toEqual([made.id]);
    const into = path.join(a.home, "restored");
    await a.store.checkpoints("s11").restore(made.id, into);
    expect(await readFile(path.join(into, "state.txt"), "utf8")).toBe("v2");
  });

  it("reads a checkpoint as NATS holds it, not as a node killed before publishing its own under that id kept it", async () => {
    const [a, b] = await twoNodes();
    await a.store.create({ ...base, id: "s12" });
    const native = (node: TestNode) => node.store.paths("s12").native;
    const files = [{ path: "state.txt", size: 2, append_only: false }];
    for (const [node, state] of [[a, "v1"] as const, [b, "v2"] as const]) {
      await mkdir(native(node), { recursive: true });
      await writeFile(path.join(native(node), "state.txt"), state);
    }
    // What node-a's cache holds after it was killed between its manifest and the push.
    await new CheckpointStore(a.store.paths("s12").checkpoints).create(native(a), files);
    const made = await b.store.checkpoints("s12").create(native(b), files);
    expect(await a.store.checkpoints("s12").get(made.id)).toEqual(made);
    const into = path.join(a.home, "restored");
    await a.store.checkpoints("s12").restore("latest", into);
    expect(await readFile(path.join(into, "state.txt"), "utf8")).toBe("v2");
  });

  it("a node taking a session over restores the last checkpoint its log records, not a newer one never logged", async () => {
    const [a, b] = await nats.twoNodes("cp");
    await a.store.create({ ...base, id: "s13" });
    const state = (node: TestNode) => path.join(node.store.paths("s13").native, "state.txt");
    const files = [{ path: "state.txt", size: 2, append_only: false }];
    const log = await a.store.openLog("s13");
    await writeFile(state(a), "v1");
    const made = await a.store.checkpoints("s13").create(a.store.paths("s13").native, files);
    await log.append([{ type: "checkpoint.created", data: { id: made.id, files } } as NewEvent]);
    // node-a dies between its second checkpoint and that checkpoint's event: the log's conversation ends at v1.
    await writeFile(state(a), "v2");
    await a.store.checkpoints("s13").create(a.store.paths("s13").native, files);
    await log.close();
    await (await b.store.openLog("s13")).close();
    expect(await readFile(state(b), "utf8")).toBe("v1");
  });
});
