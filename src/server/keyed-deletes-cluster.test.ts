// Idempotency-Key on deletes in cluster mode: the tombstone of a keyed delete is in NATS (a bucket of its own), so
// a retry that reaches another node gets the first answer (204), and two nodes deleting for one tenant at once
// both keep theirs (the tenant's list is replaced by compare-and-set).
import { describe, expect, it } from "vitest";
import { keyDigest } from "../core/deleted-sessions.js";
import type { TestDaemon } from "../testing/daemon.js";
import { raw } from "../testing/http.js";
import { withTwoDaemons } from "../testing/keyed-cluster.js";
import { useNatsCluster } from "../testing/nats-bed.js";

const bed = useNatsCluster({ nodes: 1 });

const del = (d: TestDaemon, id: string, key: string, token = d.tokens.admin) =>
  raw(d.url, "DELETE", `/v1/sessions/${id}`, { token, headers: { "Idempotency-Key": key } });

describe("Idempotency-Key on deletes, cluster store", () => {
  it("answers a delete retried on another node with 204, and another tenant's with 404", async () => {
    await withTwoDaemons(bed, "deletes", false, async ({ a, b, nodeB }) => {
      // Each made on the node that deletes it first: a session open on one node is deleted there.
      const made = await Promise.all(
        [a, b, b].map((d) =>
          raw(d.url, "POST", "/v1/sessions", { token: d.tokens.admin, body: { harness: "echo" } }),
        ),
      );
      const ids = made.map((res) => res.body.id as string);
      // Two nodes deleting at once for one tenant: each delete's tombstone is kept.
      const [first, second] = await Promise.all([del(a, ids[0]!, "k-0"), del(b, ids[1]!, "k-1")]);
      expect([first.status, second.status]).toEqual([204, 204]);
      expect((await del(b, ids[0]!, "k-0")).status).toBe(204);
      expect((await del(a, ids[1]!, "k-1")).status).toBe(204);
      expect((await del(b, ids[0]!, "k-0", b.tokens.other)).status).toBe(404);
      const stones = await nodeB.store.deletes.list("default");
      const kept = new Map(stones.map((t) => [t.id, t.key]));
      expect(kept).toEqual(
        new Map([
          [ids[0], keyDigest("k-0")],
          [ids[1], keyDigest("k-1")],
        ]),
      );
      // The third, never deleted under a key, is still there and is deleted by its first keyed delete.
      expect((await del(b, ids[2]!, "k-2")).status).toBe(204);
    });
  });

  it("answers one keyed delete sent to two nodes at once with 204 on both", async () => {
    await withTwoDaemons(bed, "twins", true, async ({ a, b }) => {
      // Several rounds: one node's request has to come before the other's tombstone is written.
      for (let round = 0; round < 4; round++) {
        const made = await raw(a.url, "POST", "/v1/sessions", {
          token: a.tokens.admin,
          body: { harness: "echo" },
        });
        const id = made.body.id as string;
        const answers = await Promise.all([del(a, id, `twin-${round}`), del(b, id, `twin-${round}`)]);
        const said = JSON.stringify(answers.map((res) => res.body));
        expect(
          answers.map((res) => res.status),
          said,
        ).toEqual([204, 204]);
        expect((await raw(b.url, "GET", `/v1/sessions/${id}`, { token: b.tokens.admin })).status).toBe(404);
      }
    });
  });
});
