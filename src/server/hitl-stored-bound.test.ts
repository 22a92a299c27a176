// Cluster mode: an answer, or a read, naming a request no node has pending is looked for in the store's durable logs (its
// session's owner may have died). That lookup reads the store's list and logs, so it runs under the tenant's HITL
// wait bound, as a wait's does: one tenant cannot send it as often as it likes. A wait that runs here holds one
// place of that bound, not two (the cluster's lookup gave its own back only once the wait had ended).
import { describe, expect, it } from "vitest";
import { collect, raw, settled } from "../testing/http.js";
import { useTestDaemon } from "../testing/use-daemon.js";
import type { CommandRouter } from "./routing.js";

/** A cluster where no other node has any session or request. */
const router: CommandRouter = {
  serve: () => () => {},
  forward: async () => undefined,
  serveLocate: () => () => {},
  locate: async () => undefined,
};

const t = useTestDaemon({ router, hitlWaitsPerTenant: 1 });

const hitl = (method: string, path: string, body?: unknown) =>
  raw(t.url, method, `/api/hitl/requests${path}`, {
    token: t.tokens.admin,
    ...(body !== undefined ? { body } : {}),
  });

describe("HITL answers looked for in the store", () => {
  it("are refused with 429 while the tenant holds every wait place, and looked for again once one is free", async () => {
    const client = t.client();
    const { id } = await client.create({ harness: "echo", config: { options: { delay_ms: 25 } } });
    const { turn } = await client.prompt(id, Array.from({ length: 400 }, (_, i) => `w${i}`).join(" "));
    const approval = {
      kind: "approval",
      sessionId: id,
      requestId: "pending-1",
      payload: { message: "Ship it?" },
    };
    expect((await hitl("POST", "", approval)).status).toBe(201);
    const gone = new AbortController();
    const held = fetch(`${t.url}/api/hitl/requests/pending-1/wait`, {
      headers: { authorization: `Bearer ${t.tokens.admin}` },
      signal: gone.signal,
    }).catch(() => undefined);

    const answer = { status: "answered", answers: { approved: true } };
    await expect
      .poll(async () => (await hitl("POST", "/nowhere/respond", answer)).body.error)
      .toMatchObject({
        code: "limit_reached",
        message: expect.stringMatching(/limits\.hitl_waits_per_tenant/),
      });
    // A read of one request no node has: the same lookup, under the same bound.
    expect((await hitl("GET", "/nowhere")).body.error).toMatchObject({ code: "limit_reached" });

    gone.abort();
    await held;
    await expect
      .poll(async () => (await hitl("POST", "/nowhere/respond", answer)).body.error)
      .toMatchObject({ code: "not_found" });
    expect((await hitl("GET", "/nowhere")).body.error).toMatchObject({ code: "not_found" });
    await client.interrupt(id);
    await collect(client, id, settled(turn));
  });
});
