// POST /v1/sessions/{id}/handoff: a client names a harness (and a model), the daemon makes the linked session.
// POST /v1/sessions/{id}/rebuild: the REST twin of `brain sessions rebuild ID`.
import { readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
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

describe("POST /v1/sessions/{id}/rebuild", () => {
  it("rewrites a session's native state from its log: the next prompt carries the history", async () => {
    const client = t.client();
    const id = (await client.create({ harness: "echo" })).id;
    await collect(client, id, settled((await client.prompt(id, "remember MANGO")).turn));
    const native = join(t.home, "sessions", id, "native");
    expect(readdirSync(native)).toContain("echo.jsonl");

    const res = await raw(t.url, "POST", `/v1/sessions/${id}/rebuild`, { token: t.tokens.admin });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    // Brain cannot write the echo runner's own file: the history goes as a marked summary in the next prompt.
    expect(res.body).toEqual({
      id,
      seeded: { how: "summary", seq: expect.any(Number) },
      aside: expect.stringMatching(/^native-before-rebuild-/),
    });
    // The old files are kept, in the session's directory; the native dir starts empty.
    expect(readdirSync(join(t.home, "sessions", id, res.body.aside as string))).toContain("echo.jsonl");
    expect(readdirSync(native)).not.toContain("echo.jsonl");
    expect((await client.session(id)).seeded?.how).toBe("summary");

    const reply = await collect(client, id, settled((await client.prompt(id, "go on")).turn));
    expect(textOf(reply)).toContain("User: remember MANGO");
    expect(textOf(reply)).toContain("Assistant: echo #1: remember MANGO");
    // Once a turn after the rebuild is answered, prompts go as they are.
    const plain = (await client.prompt(id, "plain")).turn;
    const next = await collect(client, id, settled(plain));
    expect(textOf(next.filter((e) => e.turn === plain))).toBe("echo #2: plain");

    const viaClient = await client.rebuild(id);
    expect(viaClient.seeded.how).toBe("summary");
  });

  it("refuses an unknown session, a stray field, another tenant, a running turn and a session held elsewhere", async () => {
    const client = t.client();
    const unknown = await raw(t.url, "POST", "/v1/sessions/no-such-session/rebuild", {
      token: t.tokens.admin,
    });
    expect(unknown.status).toBe(404);
    expect(JSON.stringify(unknown.body)).toContain("no session");

    const id = (await client.create({ harness: "echo", config: { options: { delay_ms: 200 } } })).id;
    const extra = await raw(t.url, "POST", `/v1/sessions/${id}/rebuild`, {
      token: t.tokens.admin,
      body: { harness: "echo" },
    });
    expect(extra.status).toBe(400);
    expect(extra.body.error).toMatchObject({ field: "harness" });
    const otherTenant = await raw(t.url, "POST", `/v1/sessions/${id}/rebuild`, { token: t.tokens.other });
    expect(otherTenant.status).toBe(404);

    const { turn } = await client.prompt(id, "a b c d e f g h i j k l m n o p q r s t u v w x y z");
    const running = await raw(t.url, "POST", `/v1/sessions/${id}/rebuild`, { token: t.tokens.admin });
    expect(running.status).toBe(409);
    expect(JSON.stringify(running.body)).toMatch(/still running: wait for it before a rebuild/);
    await client.interrupt(id);
    await collect(client, id, settled(turn));

    // Another process (a `brain run` on another machine sharing the home) has the session's log open.
    await client.close(id);
    writeFileSync(
      join(t.home, "sessions", id, "events.jsonl.lock"),
      `${JSON.stringify({ kind: "cli", pid: 4242, host: "elsewhere.example", nonce: "theirs" })}\n`,
    );
    const held = await raw(t.url, "POST", `/v1/sessions/${id}/rebuild`, { token: t.tokens.admin });
    expect(held.status).toBe(409);
    expect(JSON.stringify(held.body)).toMatch(/pid 4242 on elsewhere\.example/);
    // Nothing was moved: the session's files are as they were.
    expect(readdirSync(join(t.home, "sessions", id)).some((f) => f.startsWith("native-before"))).toBe(false);
  });
});
