// Checkpoints across the nodes of a cluster: a restore asked of a node that does not own the session, and a
// checkpoint whose manifest in NATS is damaged. A restore writes into a directory of the machine asked; forwarded
// to the owner like a command, it filled that directory on the owner's machine and answered 200 to a client who
// found nothing. A manifest damaged in NATS was copied over the node's cache and then named as that cache file,
// with "put back an intact copy of that file" for a fix that could not work (each read copies NATS's again), and
// once NATS held an intact copy again the damaged one in the cache still failed every fork of it.
import { mkdtemp, readFile, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { TestDaemon } from "../testing/daemon.js";
import { adminCall as call } from "../testing/dependents.js";
import { collect, settled } from "../testing/http.js";
import { withTwoDaemons } from "../testing/keyed-cluster.js";
import { useNatsCluster } from "../testing/nats-bed.js";
import type { TestNode } from "../testing/nats-store.js";

const bed = useNatsCluster({ nodes: 1 });

async function turn(d: TestDaemon, id: string, text: string): Promise<void> {
  const client = d.client();
  await collect(client, id, settled((await client.prompt(id, text)).turn));
}

/** An echo session open on `d` with a checkpoint after its first turn and a second turn after that; the checkpoint. */
async function checkpointedThenOn(d: TestDaemon): Promise<{ id: string; checkpoint: string; size: number }> {
  const id = (await call(d, "POST", "/v1/sessions", { harness: "echo" })).body.id as string;
  await turn(d, id, "remember KIWI");
  const made = await call(d, "POST", `/v1/sessions/${id}/checkpoints`, {});
  expect(made.status, JSON.stringify(made.body)).toBe(201);
  await turn(d, id, "remember MANGO");
  const files = made.body.files as { path: string; size: number }[];
  return { id, checkpoint: made.body.id as string, size: files[0]!.size };
}

/** The names of the nodes whose store restores a checkpoint (into a directory) from now on. */
function restorers(nodes: Record<string, TestNode>): string[] {
  const seen: string[] = [];
  for (const [name, node] of Object.entries(nodes)) {
    const checkpointsOf = node.store.checkpoints.bind(node.store);
    node.store.checkpoints = (id) => {
      const checkpoints = checkpointsOf(id);
      const restore = checkpoints.restore.bind(checkpoints);
      checkpoints.restore = (...args) => {
        seen.push(name);
        return restore(...args);
      };
      return checkpoints;
    };
  }
  return seen;
}

describe("cluster checkpoints restored and forked on another node", () => {
  it("a restore asked of node B while node A has the session open writes on node B, as of the checkpoint", async () => {
    await withTwoDaemons(bed, "restore-here", true, async ({ a, b, nodeA, nodeB }) => {
      const { id, checkpoint, size } = await checkpointedThenOn(a);
      const seen = restorers({ "node-a": nodeA, "node-b": nodeB });
      const into = path.join(await mkdtemp(path.join(tmpdir(), "brain-restore-")), "copy");
      const answer = await call(b, "POST", `/v1/sessions/${id}/restore`, { into, checkpoint });
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      expect(answer.body).toEqual({ ok: true, checkpoint });
      expect(seen).toEqual(["node-b"]);
      // The native file as the checkpoint holds it: the first turn, not the second made after it.
      expect((await stat(path.join(into, "echo.jsonl"))).size).toBe(size);
      const text = await readFile(path.join(into, "echo.jsonl"), "utf8");
      expect(text).toContain("KIWI");
      expect(text).not.toContain("MANGO");
      // The session goes on on node A.
      await turn(b, id, "remember PEAR");
      expect(a.brain.liveSession(id)).toBeTruthy();
    });
  });

  it("a manifest damaged in NATS is named there, and a fork of it works again once NATS holds it intact", async () => {
    await withTwoDaemons(bed, "damaged-manifest", true, async ({ a, b, nodeA }) => {
      const { id, checkpoint } = await checkpointedThenOn(a);
      const name = `${id}/manifests/${checkpoint}.json`;
      const intact = await nodeA.ctx.blobs.getBlob(name);
      expect(intact).not.toBeNull();
      await nodeA.ctx.blobs.putBlob({ name }, intact!.slice(0, 40));
      for (const d of [b, a]) {
        const refused = await call(d, "POST", `/v1/sessions/${id}/fork`, { checkpoint });
        expect(refused.status, JSON.stringify(refused.body)).toBe(500);
        const { message } = refused.body.error as { message: string };
        expect(message).toContain(`its manifest in NATS (object ${name} `);
        expect(message).toContain("use another checkpoint of the session");
        expect(message).not.toContain(nodeA.home);
      }
      // Nothing else is broken: a new checkpoint is made, and forked.
      expect((await call(b, "POST", `/v1/sessions/${id}/checkpoints`, {})).status).toBe(201);
      expect((await call(b, "POST", `/v1/sessions/${id}/fork`, {})).status).toBe(201);
      await nodeA.ctx.blobs.putBlob({ name }, intact!);
      for (const d of [b, a]) {
        const fork = await call(d, "POST", `/v1/sessions/${id}/fork`, { checkpoint });
        expect(fork.status, JSON.stringify(fork.body)).toBe(201);
      }
    });
  });
});
