// Cluster mode: a command for a session whose owner node is frozen (holding its lease, answering nothing) is
// refused with a 503 that names the session and its owner. That is for the session's own tenant: another tenant's
// token, naming the id, got the same 503, so it learned the session exists and which node has it. It now gets the
// 404 any missing session gets.
import { afterAll, beforeAll, expect, it } from "vitest";
import { startTestDaemon, type TestDaemon } from "../testing/daemon.js";
import { raw } from "../testing/http.js";
import { type NatsCluster, startNatsCluster } from "../testing/nats-cluster.js";
import { startStoreNode, type TestNode } from "../testing/nats-store.js";
import { NatsCommandRouter } from "./nats-commands.js";
import type { RoutedRequest, RoutedResponse } from "./routing.js";

/** A node's router whose node stops answering the commands forwarded to it once frozen, as a stopped process. */
class FreezableRouter extends NatsCommandRouter {
  private gate: Promise<void> = Promise.resolve();
  thaw: () => void = () => {};

  freeze(): void {
    this.gate = new Promise((resolve) => (this.thaw = resolve));
  }

  override serve(session: string, handle: (request: RoutedRequest) => Promise<RoutedResponse>) {
    return super.serve(session, async (request) => {
      await this.gate;
      return handle(request);
    });
  }
}

let cluster: NatsCluster;
const nodes: TestNode[] = [];
const daemons: TestDaemon[] = [];
let owner: FreezableRouter;
let a: TestDaemon;
let b: TestDaemon;
beforeAll(async () => {
  cluster = await startNatsCluster({ nodes: 1 });
  for (const name of ["frozen-a", "asked-b"]) {
    nodes.push(await startStoreNode(cluster, name, { prefix: "tenantleak", replicas: 1 }));
  }
  const [na, nb] = nodes as [TestNode, TestNode];
  owner = new FreezableRouter(na.nc, {
    prefix: "tenantleak",
    node: "frozen-a",
    owner: (id) => na.store.owner(id),
    holds: (id) => na.store.holds(id),
  });
  a = await startTestDaemon({ store: na.store, router: owner });
  daemons.push(a);
  // Short waits on the owner: the test reaches the owner's failure quickly, the lease never runs out meanwhile.
  const asker = new NatsCommandRouter(nb.nc, {
    prefix: "tenantleak",
    node: "asked-b",
    timeoutMs: 300,
    attemptMs: 300,
    patienceMs: 900,
    owner: (id) => nb.store.owner(id),
    holds: (id) => nb.store.holds(id),
  });
  b = await startTestDaemon({ store: nb.store, router: asker, tokens: a.tokens });
  daemons.push(b);
}, 120_000);
afterAll(async () => {
  owner?.thaw();
  for (const d of daemons) await d.cleanup();
  for (const node of nodes) await node.close();
  await cluster?.stop();
});

it("answers another tenant's command for a session whose owner is frozen with 404, naming neither it nor its node", async () => {
  const made = await raw(a.url, "POST", "/v1/sessions", { token: a.tokens.admin, body: { harness: "echo" } });
  expect(made.status).toBe(201);
  const id = made.body.id as string;
  owner.freeze();
  const prompt = (token: string) =>
    raw(b.url, "POST", `/v1/sessions/${id}/prompt`, { token, body: { text: "hi" } });

  // A prompt (keyed by the node: tried again until the router's patience ends) and a delete without a key (sent
  // once: the owner may be running it).
  for (const probe of [
    () => prompt(b.tokens.other),
    () => raw(b.url, "DELETE", `/v1/sessions/${id}`, { token: b.tokens.other }),
  ]) {
    const probed = await probe();
    const said = JSON.stringify(probed.body);
    expect(probed.status, said).toBe(404);
    expect(probed.body.error).toMatchObject({ code: "not_found", message: `no session "${id}"` });
    expect(said).not.toContain("frozen-a");
  }
  // An id no session has: the same answer.
  const none = await raw(b.url, "POST", "/v1/sessions/no-such-session/prompt", {
    token: b.tokens.other,
    body: { text: "hi" },
  });
  expect(none.status).toBe(404);
  expect(none.body.error).toMatchObject({ code: "not_found" });

  // The session's own tenant still hears that its owner did not answer, and which node that is.
  const own = await prompt(b.tokens.admin);
  expect(own.status, JSON.stringify(own.body)).toBe(503);
  expect(String((own.body.error as { message: string }).message)).toContain("node frozen-a");
}, 120_000);
