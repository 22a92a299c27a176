// A session taken over by another node (or reopened on one) whose newest logged checkpoint is damaged in NATS.
// The open restored that checkpoint into the node's native dir and failed with it, so every prompt of the
// session failed on every node until an operator repaired NATS by hand: a damaged checkpoint failed what did not
// ask for it. The open now starts from the newest intact checkpoint the log records, and says which it passed over.
import { readFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { SessionEvent } from "../protocol/events.js";
import type { TestDaemon } from "../testing/daemon.js";
import { adminCall as call } from "../testing/dependents.js";
import { collect, settled } from "../testing/http.js";
import { withTwoDaemons } from "../testing/keyed-cluster.js";
import { useNatsCluster } from "../testing/nats-bed.js";

const bed = useNatsCluster({ nodes: 1 });

async function turn(d: TestDaemon, id: string, text: string): Promise<SessionEvent | undefined> {
  const client = d.client();
  const events = await collect(client, id, settled((await client.prompt(id, text)).turn));
  return events.find((e) => e.type === "turn.settled");
}

/** The ids of the checkpoints the session's log records, oldest first. */
async function loggedCheckpoints(d: TestDaemon, id: string): Promise<string[]> {
  const events = await d.brain.events(id);
  return events.filter((e) => e.type === "checkpoint.created").map((e) => (e.data as { id: string }).id);
}

describe("a takeover whose newest checkpoint is damaged in NATS", () => {
  it("opens on the other node from the checkpoint before it, and the next prompt runs", async () => {
    await withTwoDaemons(bed, "damaged-takeover", true, async ({ a, b, nodeA, nodeB }) => {
      const id = (await call(a, "POST", "/v1/sessions", { harness: "echo" })).body.id as string;
      for (const text of ["remember KIWI", "remember MANGO"]) {
        await turn(a, id, text);
        expect((await call(a, "POST", `/v1/sessions/${id}/checkpoints`, {})).status).toBe(201);
      }
      const latest = (await loggedCheckpoints(a, id)).at(-1)!;
      const name = `${id}/manifests/${latest}.json`;
      const intact = await nodeA.ctx.blobs.getBlob(name);
      await nodeA.ctx.blobs.putBlob({ name }, intact!.slice(0, 40));
      // Node A lets the session go (as its lease would lapse were it dead); node B is asked next.
      await a.brain.closeSession(id);
      const answered = await turn(b, id, "remember PEAR");
      expect(answered?.data).toMatchObject({ status: "completed" });
      expect(b.brain.liveSession(id)).toBeTruthy();
      const native = await readFile(path.join(nodeB.store.paths(id).native, "echo.jsonl"), "utf8");
      expect(native).toContain("KIWI");
      expect(native).toContain("PEAR");
    });
  });
});
