// A fork or restore of a checkpoint damaged in NATS (its manifest, or a blob it needs) fails, and says what to
// use instead: the checkpoint the session's log records before it, by id. It said "use another checkpoint of the
// session" (or, for a blob, only that its bytes were not the manifest's), and no REST route lists them: a client
// that forked "latest" was left to read the whole log for checkpoint.created events to learn an id to ask for.
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { TestDaemon } from "../testing/daemon.js";
import { adminCall as call } from "../testing/dependents.js";
import { collect, settled } from "../testing/http.js";
import { withTwoDaemons } from "../testing/keyed-cluster.js";
import { useNatsCluster } from "../testing/nats-bed.js";

const bed = useNatsCluster({ nodes: 1 });

/** An echo session on `d` checkpointed after each of two turns; the ids its log records, oldest first. */
async function twiceCheckpointed(d: TestDaemon): Promise<{ id: string; ids: string[] }> {
  const id = (await call(d, "POST", "/v1/sessions", { harness: "echo" })).body.id as string;
  const client = d.client();
  for (const text of ["remember KIWI", "remember MANGO"]) {
    await collect(client, id, settled((await client.prompt(id, text)).turn));
    expect((await call(d, "POST", `/v1/sessions/${id}/checkpoints`, {})).status).toBe(201);
  }
  const events = await d.brain.events(id);
  const ids = events.filter((e) => e.type === "checkpoint.created").map((e) => (e.data as { id: string }).id);
  return { id, ids };
}

/** The refusal of a fork of `latest` and of a restore of it, as node `d` answers them. */
async function refusals(d: TestDaemon, id: string): Promise<string[]> {
  const into = path.join(await mkdtemp(path.join(tmpdir(), "brain-restore-")), "copy");
  const out: string[] = [];
  for (const [route, body] of [
    ["fork", {}],
    ["restore", { into, checkpoint: "latest" }],
  ] as const) {
    const refused = await call(d, "POST", `/v1/sessions/${id}/${route}`, body);
    expect(refused.status, JSON.stringify(refused.body)).toBe(500);
    out.push((refused.body.error as { message: string }).message);
  }
  return out;
}

describe("a damaged checkpoint names the one before it", () => {
  it("a manifest damaged in NATS: a fork or restore of latest names the previous id", async () => {
    await withTwoDaemons(bed, "damaged-hint-manifest", true, async ({ a, b, nodeA }) => {
      const { id, ids } = await twiceCheckpointed(a);
      const [previous, latest] = ids.slice(-2) as [string, string];
      const name = `${id}/manifests/${latest}.json`;
      const intact = await nodeA.ctx.blobs.getBlob(name);
      await nodeA.ctx.blobs.putBlob({ name }, intact!.slice(0, 40));
      for (const message of [...(await refusals(b, id)), ...(await refusals(a, id))]) {
        expect(message).toContain(`checkpoint ${latest} `);
        expect(message).toContain(`{"checkpoint":"${previous}"}`);
        expect(message).toContain("use another checkpoint of the session");
      }
      const fork = await call(b, "POST", `/v1/sessions/${id}/fork`, { checkpoint: previous });
      expect(fork.status, JSON.stringify(fork.body)).toBe(201);
    });
  });

  it("a blob truncated in NATS: a fork or restore of latest on a node that lacks it names the previous id", async () => {
    await withTwoDaemons(bed, "damaged-hint-blob", true, async ({ a, b, nodeA }) => {
      const { id, ids } = await twiceCheckpointed(a);
      const [previous, latest] = ids.slice(-2) as [string, string];
      const manifest = await nodeA.ctx.blobs.getBlob(`${id}/manifests/${latest}.json`);
      const { files } = JSON.parse(Buffer.from(manifest!).toString("utf8")) as {
        files: { segments: { blob: string }[] }[];
      };
      const blob = `${id}/blobs/${files[0]!.segments.at(-1)!.blob}`;
      const bytes = await nodeA.ctx.blobs.getBlob(blob);
      await nodeA.ctx.blobs.putBlob({ name: blob }, bytes!.slice(0, 3));
      // Node A, which holds the blob in its cache, lets the session go: the fork runs on node B.
      await a.brain.closeSession(id);
      for (const message of await refusals(b, id)) {
        expect(message).toContain(`checkpoint ${latest} `);
        expect(message).toContain(`{"checkpoint":"${previous}"}`);
        expect(message).toContain("use another checkpoint of the session");
      }
    });
  });
});
