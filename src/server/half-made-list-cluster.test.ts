// GET /v1/sessions on the cluster store leaves out a session whose log was never written (its maker killed before
// its first event, or making it now), as the embedded store's does (half-made-list.test.ts). Told from the one look
// at the subject's last message the list makes for updated_at anyway; a session whose messages the stream's limits
// all let go (its seq mark says where its log ended) is a made one, and stays listed.
import { expect, it } from "vitest";
import { writeMark } from "../store/nats/seq-mark.js";
import { startTestDaemon } from "../testing/daemon.js";
import { collect, raw, settled } from "../testing/http.js";
import { useNatsCluster } from "../testing/nats-bed.js";
import { startStoreNode, type TestNode } from "../testing/nats-store.js";

const bed = useNatsCluster({ nodes: 1 });

it("lists no session whose log was never written, and every made one", async () => {
  let node: TestNode | undefined;
  let d: Awaited<ReturnType<typeof startTestDaemon>> | undefined;
  try {
    node = await startStoreNode(bed.cluster, "node-a", { prefix: "halfmade", replicas: 1 });
    d = await startTestDaemon({ store: node.store });
    const client = d.client();
    const { id: made } = await client.create({ harness: "echo" });
    await collect(client, made, settled((await client.prompt(made, "one")).turn));
    // What a maker killed before the first event leaves: the record, and no message on the session's subject.
    const halfMade = (await node.store.create({ harness: "echo", config: {} })).id;
    // A record with no message but a seq mark: a made session whose messages the stream's limits let go.
    const dropped = await node.store.create({ harness: "echo", config: {} });
    await writeMark(node.ctx.records, dropped.id, String(Date.parse(dropped.created_at)), 7);

    const listed = await raw(d.url, "GET", "/v1/sessions", { token: d.tokens.admin });
    const sessions = listed.body.sessions as { id: string; updated_at?: string }[];
    expect(sessions.map((s) => s.id).sort()).toEqual([made, dropped.id].sort());
    expect(sessions.find((s) => s.id === made)?.updated_at).toBeDefined();
    // Asked for by id it is still there.
    expect((await raw(d.url, "GET", `/v1/sessions/${halfMade}`, { token: d.tokens.admin })).status).toBe(200);
  } finally {
    await d?.cleanup();
    await node?.close();
  }
});
