// A delete of a session others were handed off or forked from, on the cluster store: its dependents are found in
// the NATS record listing as in the embedded store's, and a forced delete's keyed retry on another node is 204.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestDaemon, type TestDaemon } from "../testing/daemon.js";
import { collect, raw, settled } from "../testing/http.js";
import { type NatsCluster, startNatsCluster } from "../testing/nats-cluster.js";
import { startStoreNode, type TestNode } from "../testing/nats-store.js";
import { NatsCommandRouter } from "./nats-commands.js";

let cluster: NatsCluster;
beforeAll(async () => {
  cluster = await startNatsCluster({ nodes: 1 });
}, 120_000);
afterAll(async () => {
  await cluster?.stop();
});

const call = (
  d: TestDaemon,
  method: "POST" | "DELETE" | "GET",
  route: string,
  body?: unknown,
  key?: string,
) =>
  raw(d.url, method, route, {
    token: d.tokens.admin,
    ...(body === undefined ? {} : { body }),
    ...(key ? { headers: { "Idempotency-Key": key } } : {}),
  });

describe("DELETE of a session others depend on, cluster store", () => {
  it("refuses it naming the handoff and fork, and answers a forced keyed delete's retry on another node with 204", async () => {
    const nodes: TestNode[] = [];
    const daemons: TestDaemon[] = [];
    try {
      for (const name of ["dep-a", "dep-b"]) {
        nodes.push(await startStoreNode(cluster, name, { prefix: "dependents", replicas: 1 }));
      }
      const a = await startTestDaemon({ store: nodes[0]!.store });
      daemons.push(a);
      const b = await startTestDaemon({ store: nodes[1]!.store, tokens: a.tokens });
      daemons.push(b);
      const client = a.client();
      const id = (await call(a, "POST", "/v1/sessions", { harness: "echo" })).body.id as string;
      await collect(client, id, settled((await client.prompt(id, "remember the parrot")).turn));
      expect((await call(a, "POST", `/v1/sessions/${id}/checkpoints`, {})).status).toBe(201);
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
    } finally {
      for (const d of daemons) await d.cleanup();
      for (const node of nodes) await node.close();
    }
  });

  it("carries ?force=true to the node that has the session open when another node is asked", async () => {
    const nodes: TestNode[] = [];
    const daemons: TestDaemon[] = [];
    try {
      for (const name of ["fwd-a", "fwd-b"]) {
        nodes.push(await startStoreNode(cluster, name, { prefix: "forwarded", replicas: 1 }));
      }
      // As `brain serve --cluster` runs them: a command for a session open on the other node goes there.
      const routed = (node: TestNode, name: string) => ({
        store: node.store,
        router: new NatsCommandRouter(node.nc, {
          prefix: "forwarded",
          node: name,
          owner: (id) => node.store.owner(id),
          holds: (id) => node.store.holds(id),
        }),
      });
      const a = await startTestDaemon(routed(nodes[0]!, "fwd-a"));
      daemons.push(a);
      const b = await startTestDaemon({ ...routed(nodes[1]!, "fwd-b"), tokens: a.tokens });
      daemons.push(b);
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
    } finally {
      for (const d of daemons) await d.cleanup();
      for (const node of nodes) await node.close();
    }
  });
});
