// POST /v1/sessions/{id}/handoff: a client names a harness (and a model), the daemon makes the linked session.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestDaemon, type TestDaemon } from "../testing/daemon.js";
import { collect, raw, settled, textOf } from "../testing/http.js";

let t: TestDaemon;
beforeAll(async () => {
  t = await startTestDaemon();
});
afterAll(async () => {
  await t.cleanup();
});

describe("POST /v1/sessions/{id}/handoff", () => {
  it("makes a linked session whose first prompt carries the conversation; refuses bad input by field", async () => {
    const client = t.client();
    const created = await raw(t.url, "POST", "/v1/sessions", {
      token: t.tokens.admin,
      body: { harness: "echo" },
    });
    const id = created.body.id as string;
    await collect(client, id, settled((await client.prompt(id, "remember PAPAYA")).turn));
    const res = await raw(t.url, "POST", `/v1/sessions/${id}/handoff`, {
      token: t.tokens.admin,
      body: { to: "echo" },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.handoff_from).toEqual({ session: id, seq: expect.any(Number) });
    // The echo runner's native format is not one Brain writes: the history goes as a marked summary.
    expect(res.body.seeded).toEqual({ how: "summary", seq: 0 });
    const moved = res.body.id as string;
    const reply = await collect(client, moved, settled((await client.prompt(moved, "go on")).turn));
    expect(textOf(reply)).toContain("User: remember PAPAYA");
    expect(textOf(reply)).toContain("Assistant: echo #1: remember PAPAYA");

    const unknown = await raw(t.url, "POST", `/v1/sessions/${id}/handoff`, {
      token: t.tokens.admin,
      body: { to: "nope" },
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toMatchObject({ field: "to" });
    const extra = await raw(t.url, "POST", `/v1/sessions/${id}/handoff`, {
      token: t.tokens.admin,
      body: { to: "echo", options: { cwd: "/" } },
    });
    expect(extra.status).toBe(400);
    const otherTenant = await raw(t.url, "POST", `/v1/sessions/${id}/handoff`, {
      token: t.tokens.other,
      body: { to: "echo" },
    });
    expect(otherTenant.status).toBe(404);
  });
});
