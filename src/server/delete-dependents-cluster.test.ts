// A delete of a session others were handed off or forked from, on the cluster store: its dependents are found in
// the NATS record listing as in the embedded store's, and a forced delete's keyed retry on another node is 204.
import { describe, expect, it } from "vitest";
import { adminCall as call, checkpointedEchoSession } from "../testing/dependents.js";
import { collect, settled } from "../testing/http.js";
import { withTwoDaemons } from "../testing/keyed-cluster.js";
import { useNatsCluster } from "../testing/nats-bed.js";

const bed = useNatsCluster({ nodes: 1 });

describe("DELETE of a session others depend on, cluster store", () => {
  it("refuses it naming the handoff and fork, and answers a forced keyed delete's retry on another node with 204", async () => {
    await withTwoDaemons(bed, "dependents", false, async ({ a, b }) => {
      const id = await checkpointedEchoSession(a);
      const fork = await call(a, "POST", `/v1/sessions/${id}/fork`, {});
      const handoff = await call(a, "POST", `/v1/sessions/${id}/handoff`, { to: "echo" });
      expect([fork.status, handoff.status], JSON.stringify([fork.body, handoff.body])).toEqual([201, 201]);

      const refused = await call(a, "DELETE", `/v1/sessions/${id}`);
      expect(refused.status, JSON.stringify(refused.body)).toBe(409);
      const message = (refused.body.error as { message: string }).message;
      expect(message).toContain("2 sessions were forked or handed off from it");
      expect(message).toContain(fork.body.id as string);
      expect(message).toContain(handoff.body.id as string);

      expect((await call(a, "DELETE", `/v1/sessions/${id}?force=true`, undefined, "dep-1")).status).toBe(204);
      expect((await call(b, "DELETE", `/v1/sessions/${id}?force=true`, undefined, "dep-1")).status).toBe(204);
      expect((await call(b, "GET", `/v1/sessions/${fork.body.id}`)).status).toBe(200);
    });
  });

  it("carries ?force=true to the node that has the session open when another node is asked", async () => {
    await withTwoDaemons(bed, "forwarded", true, async ({ a, b }) => {
      const client = a.client();
      const id = (await call(a, "POST", "/v1/sessions", { harness: "echo" })).body.id as string;
      await collect(client, id, settled((await client.prompt(id, "remember the parrot")).turn));
      const handoff = await call(a, "POST", `/v1/sessions/${id}/handoff`, { to: "echo" });
      expect(handoff.status, JSON.stringify(handoff.body)).toBe(201);

      const refused = await call(b, "DELETE", `/v1/sessions/${id}`);
      expect(refused.status, JSON.stringify(refused.body)).toBe(409);
      expect(JSON.stringify(refused.body)).toContain(handoff.body.id as string);
      const forced = await call(b, "DELETE", `/v1/sessions/${id}?force=true`);
      expect(forced.status, JSON.stringify(forced.body)).toBe(204);
      expect((await call(a, "GET", `/v1/sessions/${id}`)).status).toBe(404);
    });
  });
});
