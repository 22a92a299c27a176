// A node that passed its lease check just before writing a checkpoint, and whose write was then held up past its
// lease: what it writes late must neither replace the checkpoint the session's new owner made and logged meanwhile
// (each node numbers checkpoints from its own cache) nor drop that one from the session's list.
import { mkdir, mkdtemp, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import type { ObjectStore } from "@nats-io/obj";
import { describe, expect, it } from "vitest";
import { sleep } from "../../core/sleep.js";
import type { NewEvent } from "../../protocol/events.js";
import { useNatsCluster } from "../../testing/nats-bed.js";
import type { TestNode } from "../../testing/nats-store.js";
import { idsKey } from "./checkpoint-ids.js";
import { ReplicatedCheckpoints } from "./checkpoints.js";

const base = { harness: "process", config: { model: "m1" } };
const nats = useNatsCluster();
const files = [{ path: "state.txt", size: 2, append_only: false }];

/** Node `node`'s real object store, whose putBlob of an object named as `held` says picks waits for `release`. */
function holdingPuts(node: TestNode, held: (name: string) => boolean) {
  let release!: () => void;
  let reached!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const reachedPut = new Promise<void>((resolve) => (reached = resolve));
  const real = node.ctx.blobs;
  const objects = new Proxy(real, {
    get(target, prop) {
      if (prop === "putBlob") {
        return async (...args: Parameters<ObjectStore["putBlob"]>) => {
          if (held(args[0].name)) {
            reached();
            await released;
          }
          return target.putBlob(...args);
        };
      }
      const value = Reflect.get(target, prop, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { objects, release, reachedPut };
}

async function setUp(
  id: string,
): Promise<[TestNode, TestNode, (node: TestNode, s: string) => Promise<void>]> {
  const [a, b] = await nats.twoNodes("cp", { leases: false });
  await a.store.create({ ...base, id });
  const state = async (node: TestNode, s: string) => {
    await mkdir(node.store.paths(id).native, { recursive: true });
    await writeFile(path.join(node.store.paths(id).native, "state.txt"), s);
  };
  return [a, b, state];
}

/** What checkpoint `id` of the session restores, read through a node with an empty cache. */
async function restoredState(node: TestNode, session: string, id: string): Promise<string> {
  const fresh = await mkdtemp(path.join(node.home, "fresh-"));
  const reader = new ReplicatedCheckpoints(
    node.ctx.blobs,
    session,
    path.join(fresh, "cache"),
    node.ctx.js,
    node.ctx.records,
  );
  await reader.restore(id, path.join(fresh, "native"));
  return readFile(path.join(fresh, "native", "state.txt"), "utf8");
}

describe("cluster checkpoints of a stale owner", () => {
  it("a late manifest write never replaces the checkpoint the new owner made and logged", async () => {
    const [a, b, state] = await setUp("s21");
    await state(a, "v1");
    await state(b, "v2");
    const hold = holdingPuts(a, (name) => name.includes("/manifests/"));
    const cache = a.store.paths("s21").checkpoints;
    const stale = new ReplicatedCheckpoints(hold.objects, "s21", cache, a.ctx.js, a.ctx.records);
    const late = stale.create(a.store.paths("s21").native, files).catch(() => undefined);
    await hold.reachedPut;
    const made = await b.store.checkpoints("s21").create(b.store.paths("s21").native, files);
    hold.release();
    const lateMade = await late;
    expect(await restoredState(b, "s21", made.id)).toBe("v2");
    expect(lateMade?.id).not.toBe(made.id);
    expect(await b.store.checkpoints("s21").get(made.id)).toEqual(made);
  });

  it("a late write of the list of checkpoints drops none of the new owner's", async () => {
    const [a, b, state] = await setUp("s22");
    await state(a, "v1");
    await a.store.checkpoints("s22").create(a.store.paths("s22").native, files);
    await state(b, "v2");
    const hold = holdingPuts(a, (name) => name.endsWith("/index"));
    const cache = a.store.paths("s22").checkpoints;
    const stale = new ReplicatedCheckpoints(hold.objects, "s22", cache, a.ctx.js, a.ctx.records);
    const late = stale.create(a.store.paths("s22").native, files).catch(() => undefined);
    // A node that writes no such list goes on at once: then there is nothing to hold.
    await Promise.race([hold.reachedPut, late]);
    const first = await b.store.checkpoints("s22").create(b.store.paths("s22").native, files);
    await state(b, "v3");
    const second = await b.store.checkpoints("s22").create(b.store.paths("s22").native, files);
    hold.release();
    await late;
    const fresh = await mkdtemp(path.join(b.home, "list-"));
    const listed = await new ReplicatedCheckpoints(b.ctx.blobs, "s22", fresh, b.ctx.js, b.ctx.records).list();
    expect(listed).toEqual(expect.arrayContaining([first.id, second.id]));
    expect(await restoredState(b, "s22", second.id)).toBe("v3");
  });

  it("lists and restores checkpoints stored before ids were reserved, and numbers the next after them", async () => {
    const [a, b, state] = await setUp("s23");
    await state(a, "v1");
    const old = await a.store.checkpoints("s23").create(a.store.paths("s23").native, files);
    // As an earlier version stored it: the manifest and the index object, no reserved ids.
    await a.ctx.records.purge(idsKey("s23"));
    expect(await restoredState(b, "s23", old.id)).toBe("v1");
    await state(b, "v2");
    const next = await b.store.checkpoints("s23").create(b.store.paths("s23").native, files);
    expect(Number(next.id)).toBeGreaterThan(Number(old.id));
    expect(await b.store.checkpoints("s23").list()).toEqual([old.id, next.id]);
    await b.store.remove("s23");
    expect((await b.ctx.records.get(idsKey("s23")))?.operation).not.toBe("PUT");
  });

  it("a node taking the session back restores the checkpoint the log records, not a stale owner's late write", async () => {
    const [a, b] = await nats.twoNodes("cpl", { leaseTtlMs: 1500 });
    await a.store.create({ ...base, id: "s24" });
    const native = (node: TestNode) => node.store.paths("s24").native;
    const stale = await a.store.openLog("s24");
    await writeFile(path.join(native(a), "state.txt"), "v1");
    const hold = holdingPuts(a, (name) => name.includes("/manifests/"));
    const owns = () => a.store.lease("s24")!.check();
    const cache = a.store.paths("s24").checkpoints;
    const late = new ReplicatedCheckpoints(hold.objects, "s24", cache, a.ctx.js, a.ctx.records, { owns })
      .create(native(a), files)
      .catch(() => undefined);
    await hold.reachedPut;
    // node-a freezes past its lease with its manifest write in flight; node-b takes the session over.
    a.store.lease("s24")!.pauseRenewals(true);
    let log: Awaited<ReturnType<TestNode["store"]["openLog"]>> | undefined;
    while (!log) {
      log = await b.store.openLog("s24").catch(() => undefined);
      if (!log) await sleep(100);
    }
    await writeFile(path.join(native(b), "state.txt"), "v2");
    const made = await b.store.checkpoints("s24").create(native(b), files);
    await log.append([{ type: "checkpoint.created", data: { id: made.id, files } } as NewEvent]);
    await log.close();
    hold.release();
    await late;
    await stale.close();
    await (await a.store.openLog("s24")).close();
    expect(await readFile(path.join(native(a), "state.txt"), "utf8")).toBe("v2");
  });
});
