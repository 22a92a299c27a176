// What a node's next checkpoint builds on: a stale owner's checkpoint (published, never logged) numbered after the
// one this node's native dir holds must not lend its bytes to it.
import { mkdir, mkdtemp, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { useNatsCluster } from "../../testing/nats-bed.js";
import type { TestNode } from "../../testing/nats-store.js";
import { ReplicatedCheckpoints } from "./checkpoints.js";

const nats = useNatsCluster();

describe("cluster checkpoints' base", () => {
  it("stores an append-only file against the checkpoint its native dir holds, not another node's numbered last", async () => {
    const [a, b] = await nats.twoNodes("cp", { leases: false });
    await a.store.create({ harness: "process", config: { model: "m1" }, id: "s21" });
    const native = (node: TestNode) => node.store.paths("s21").native;
    // Same first and last 4 KiB, different middle: only those windows are compared.
    const head = "h".repeat(4096);
    const tail = "t".repeat(4096);
    const write = async (node: TestNode, text: string, append_only = true) => {
      await mkdir(native(node), { recursive: true });
      await writeFile(path.join(native(node), "log.jsonl"), text);
      return [{ path: "log.jsonl", size: Buffer.byteLength(text), append_only }];
    };
    const own = `${head}${"y".repeat(4096)}${tail}`;
    await a.store.checkpoints("s21").create(native(a), await write(a, own));
    // The stale owner's, numbered after node-a's, its file stored whole (else it would keep node-a's bytes).
    const other = await write(b, `${head}${"x".repeat(4096)}${tail}`, false);
    await b.store.checkpoints("s21").create(native(b), other);
    const grown = `${own}more`;
    const made = await a.store.checkpoints("s21").create(native(a), await write(a, grown));
    const fresh = await mkdtemp(path.join(a.home, "fresh-"));
    const reader = new ReplicatedCheckpoints(a.ctx.blobs, "s21", fresh, a.ctx.js, a.ctx.records);
    const into = path.join(a.home, "restored");
    await reader.restore(made.id, into);
    expect(await readFile(path.join(into, "log.jsonl"), "utf8")).toBe(grown);
  });
});
