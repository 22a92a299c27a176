// nui HITL waits per tenant (limits.hitl_waits_per_tenant): a wait lasts until its request is answered, so past
// the bound the next is refused with 429 naming it, another tenant is not affected, and a wait whose client went
// away gives its place back.
import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { collect, type Raw, raw, settled } from "../testing/http.js";
import { useTestDaemon } from "../testing/use-daemon.js";

const t = useTestDaemon({ hitlWaitsPerTenant: 2 });

const hitl = (method: string, path: string, body?: unknown, token = t.tokens.admin) =>
  raw(t.url, method, `/api/hitl/requests${path}`, { token, ...(body !== undefined ? { body } : {}) });

/** Asks `wait` again (each answers at once) until its status is `status`: the daemon's count is what changes. */
async function until(status: number, wait: () => Promise<Raw>): Promise<Raw> {
  for (;;) {
    const res = await wait();
    if (res.status === status) return res;
    await sleep(20);
  }
}

describe("HITL waits per tenant", () => {
  it("refuses a wait past the bound, by name, and takes one again once a waiting client has gone", async () => {
    const client = t.client();
    const { id } = await client.create({ harness: "echo", config: { options: { delay_ms: 25 } } });
    const long = Array.from({ length: 400 }, (_, i) => `w${i}`).join(" ");
    const { turn } = await client.prompt(id, long);
    const approval = (requestId: string) => ({
      kind: "approval",
      sessionId: id,
      requestId,
      payload: { title: "Deploy", message: "Ship it?", toolName: "deploy" },
    });
    expect((await hitl("POST", "", approval("answered-1"))).status).toBe(201);
    const answer = { status: "answered", answers: { approved: true } };
    expect((await hitl("POST", "/answered-1/respond", answer)).status).toBe(200);
    // A wait for an answered request answers at once: it shows whether the tenant has a place left.
    const probe = () => hitl("GET", "/answered-1/wait");
    expect((await probe()).status).toBe(200);

    expect((await hitl("POST", "", approval("pending-1"))).status).toBe(201);
    const gone = new AbortController();
    const held = [1, 2].map(() =>
      fetch(`${t.url}/api/hitl/requests/pending-1/wait`, {
        headers: { authorization: `Bearer ${t.tokens.admin}` },
        signal: gone.signal,
      }).catch(() => undefined),
    );
    const refused = await until(429, probe);
    expect(refused.body.error).toMatchObject({
      code: "limit_reached",
      message: expect.stringMatching(/tenant "default" has 2 HITL waits open.*limits\.hitl_waits_per_tenant/),
    });
    // Another tenant waits as before (its lookup finds no request of its own).
    expect((await hitl("GET", "/answered-1/wait", undefined, t.tokens.other)).status).toBe(404);

    gone.abort();
    await Promise.all(held);
    expect((await until(200, probe)).body).toMatchObject({ requestId: "answered-1", status: "answered" });
    await client.interrupt(id);
    await collect(client, id, settled(turn));
  });
});
