// The daemon's REST routes over real HTTP on loopback: every route, auth, tenants, roles, and every bad input
// the routes refuse (400 naming the field, 404 for unknown or foreign sessions, 409 for conflicts).

import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { startTestDaemon } from "../testing/daemon.js";
import { collect, raw, settled, textOf } from "../testing/http.js";
import { useTestDaemon } from "../testing/use-daemon.js";
import { homeAgents } from "./agents.js";
import { startDaemon } from "./daemon.js";

const t = useTestDaemon();

const admin = () => t.tokens.admin;
const slow = { options: { delay_ms: 40 } };

async function newSession(body: Record<string, unknown> = { harness: "echo" }, token = admin()) {
  const res = await raw(t.url, "POST", "/v1/sessions", { token, body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.id as string;
}

describe("auth", () => {
  it("refuses a request without a token, or with an unknown one, with 401", async () => {
    const none = await raw(t.url, "GET", "/v1/sessions");
    expect(none.status).toBe(401);
    expect(none.headers.get("www-authenticate")).toBe("Bearer");
    expect(none.body.error).toMatchObject({ code: "unauthorized" });
    expect(String((none.body.error as { message: string }).message)).toContain("brain token");
    const wrong = await raw(t.url, "GET", "/v1/sessions", { token: "x".repeat(43) });
    expect(wrong.status).toBe(401);
  });

  it("takes the token as ?access_token= too (EventSource cannot set headers)", async () => {
    const res = await raw(t.url, "GET", `/v1/whoami?access_token=${admin()}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ tenant: "default", role: "controller", auth: true });
  });

  it("serves the web UI, /openapi.json and /healthz without a token", async () => {
    const page = await fetch(`${t.url}/`);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toContain("text/html");
    expect((await raw(t.url, "GET", "/openapi.json")).status).toBe(200);
    expect((await raw(t.url, "GET", "/healthz")).body).toEqual({ ok: true });
    expect((await raw(t.url, "GET", "/ui/..%2Fpackage.json")).status).toBe(404);
  });

  it("answers an unknown route with a JSON 404", async () => {
    const res = await raw(t.url, "GET", "/v1/nothing", { token: admin() });
    expect(res.status).toBe(404);
    expect(res.body.error).toMatchObject({ code: "not_found" });
  });
});

describe("sessions", () => {
  it("lists harnesses and (no) agents", async () => {
    expect((await raw(t.url, "GET", "/v1/harnesses", { token: admin() })).body).toEqual({
      harnesses: [{ name: "echo", steering: true, images: false }],
    });
    expect((await raw(t.url, "GET", "/v1/agents", { token: admin() })).body).toEqual({ agents: [] });
  });

  it("creates, gets and lists a session", async () => {
    const id = await newSession({ harness: "echo", id: "my-session", config: { tools: ["echo"] } });
    expect(id).toBe("my-session");
    const got = await raw(t.url, "GET", `/v1/sessions/${id}`, { token: admin() });
    expect(got.body).toMatchObject({ id, harness: "echo", status: "open", last_seq: 1, pending: [] });
    const list = await raw(t.url, "GET", "/v1/sessions", { token: admin() });
    expect((list.body.sessions as { id: string }[]).map((s) => s.id)).toContain(id);
  });

  it.each([
    [{ harness: "echo", model: "x" }, "model", "unknown field"],
    [{ harness: 7 }, "harness", "expected string"],
    [{ harness: "nope" }, "harness", 'unknown harness "nope"; known harnesses: echo'],
    [{ harness: "echo", id: "../etc" }, "id", "letters, digits"],
    [{ harness: "echo", config: { tools: ["no-such-tool"] } }, "config.tools", 'unknown tool "no-such-tool"'],
    [{ harness: "echo", config: { model: 3 } }, "config.model", "expected string"],
    [{ harness: "echo", permissions: { default: "maybe" } }, "permissions.default", "Invalid option"],
    [{ agent: "ghost" }, "agent", 'unknown agent "ghost"'],
  ])("refuses the body %j with 400 naming %s", async (body, field, reason) => {
    const res = await raw(t.url, "POST", "/v1/sessions", { token: admin(), body });
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    const error = res.body.error as { code: string; field: string; message: string };
    expect(error.code).toBe("bad_request");
    expect(error.field).toBe(field);
    expect(error.message).toContain(reason);
  });

  it("runs the offline echo runner when the body names no harness, as `brain run` does", async () => {
    const res = await raw(t.url, "POST", "/v1/sessions", { token: admin(), body: {} });
    expect(res.status).toBe(201);
    expect(res.body.harness).toBe("echo");
  });

  it("refuses a body that is not JSON, or not an object", async () => {
    const bad = await raw(t.url, "POST", "/v1/sessions", { token: admin(), body: "{harness:" });
    expect(bad.status).toBe(400);
    expect((bad.body.error as { message: string }).message).toContain("not valid JSON");
    const list = await raw(t.url, "POST", "/v1/sessions", { token: admin(), body: "[1]" });
    expect(list.status).toBe(400);
  });

  it("refuses a body over 8 MiB", async () => {
    const id = await newSession();
    const res = await raw(t.url, "POST", `/v1/sessions/${id}/prompt`, {
      token: admin(),
      body: { text: "x".repeat(9 << 20) },
    });
    expect(res.status).toBe(413);
    expect((res.body.error as { message: string }).message).toContain("body over 8 MiB");
  });

  it("refuses a second session with the same id with 409", async () => {
    await newSession({ harness: "echo", id: "twice" });
    const again = await raw(t.url, "POST", "/v1/sessions", {
      token: admin(),
      body: { harness: "echo", id: "twice" },
    });
    expect(again.status).toBe(409);
    expect(again.body.error).toMatchObject({ field: "id" });
  });

  it("answers 404 for a session that does not exist, whatever the route", async () => {
    for (const [method, path, body] of [
      ["GET", "/v1/sessions/ghost", undefined],
      ["POST", "/v1/sessions/ghost/prompt", { text: "hi" }],
      ["POST", "/v1/sessions/ghost/interrupt", undefined],
      ["POST", "/v1/sessions/ghost/checkpoints", undefined],
      ["POST", "/v1/sessions/ghost/fork", {}],
      ["POST", "/v1/sessions/ghost/close", undefined],
      ["DELETE", "/v1/sessions/ghost", undefined],
      ["GET", "/v1/sessions/ghost/events", undefined],
      ["GET", "/v1/sessions/ghost/log", undefined],
      ["GET", "/v1/sessions/not%20an%20id", undefined],
    ] as const) {
      const res = await raw(t.url, method, path, { token: admin(), ...(body ? { body } : {}) });
      expect(res.status, `${method} ${path}`).toBe(404);
    }
  });
});

describe("binding", () => {
  it("refuses to serve without auth on an address that is not loopback", async () => {
    const { brain } = t;
    await expect(startDaemon({ brain, host: "0.0.0.0", port: 0 })).rejects.toThrow(
      "--no-auth is only allowed on a loopback address, not 0.0.0.0",
    );
  });

  it("serves without auth on loopback: every caller is the default tenant's controller", async () => {
    const open = await startTestDaemon({ auth: false });
    try {
      // DNS rebinding: a page on evil.example whose name now resolves to 127.0.0.1 (fetch cannot set Host).
      const rebound = await new Promise<number>((resolve, reject) => {
        http
          .get(`${open.url}/v1/whoami`, { headers: { host: "evil.example:7777" } }, (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          })
          .on("error", reject);
      });
      expect(rebound).toBe(403);
      expect((await raw(open.url, "GET", "/v1/whoami")).body).toEqual({
        tenant: "default",
        role: "controller",
        auth: false,
      });
    } finally {
      await open.cleanup();
    }
  });
});

describe("a session whose harness this daemon does not offer", () => {
  it("can be read and watched, not driven (409 naming the harness)", async () => {
    const id = await newSession();
    await collect(t.client(), id, settled((await t.client().prompt(id, "before")).turn));
    const other = await startTestDaemon({ home: t.home, factories: [] });
    try {
      const client = other.client();
      const events = await collect(client, id, settled());
      expect(textOf(events)).toBe("echo #1: before");
      expect((await raw(other.url, "GET", `/v1/sessions/${id}`, { token: other.tokens.admin })).status).toBe(
        200,
      );
      const prompt = await raw(other.url, "POST", `/v1/sessions/${id}/prompt`, {
        token: other.tokens.admin,
        body: { text: "now" },
      });
      expect(prompt.status).toBe(409);
      expect((prompt.body.error as { message: string }).message).toContain(
        'harness "echo", which this daemon does not offer',
      );
    } finally {
      await other.daemon.close();
      await other.brain.close();
    }
  });
});

describe("tenants and roles", () => {
  it("hides another tenant's sessions: 404, not 403, and not listed", async () => {
    const id = await newSession();
    const theirs = await raw(t.url, "GET", `/v1/sessions/${id}`, { token: t.tokens.other });
    expect(theirs.status).toBe(404);
    const prompt = await raw(t.url, "POST", `/v1/sessions/${id}/prompt`, {
      token: t.tokens.other,
      body: { text: "x" },
    });
    expect(prompt.status).toBe(404);
    const events = await raw(t.url, "GET", `/v1/sessions/${id}/events`, { token: t.tokens.other });
    expect(events.status).toBe(404);
    const list = await raw(t.url, "GET", "/v1/sessions", { token: t.tokens.other });
    expect((list.body.sessions as { id: string }[]).map((s) => s.id)).not.toContain(id);
    const mine = await newSession({ harness: "echo" }, t.tokens.other);
    const seen = await raw(t.url, "GET", "/v1/sessions", { token: t.tokens.other });
    expect((seen.body.sessions as { id: string; tenant: string }[]).map((s) => [s.id, s.tenant])).toEqual([
      [mine, "acme"],
    ]);
    expect((await raw(t.url, "GET", `/v1/sessions/${mine}`, { token: admin() })).status).toBe(404);
  });

  it("lets an observer watch but not drive (403), by token or by request", async () => {
    const id = await newSession();
    const watched = await raw(t.url, "GET", `/v1/sessions/${id}`, { token: t.tokens.observer });
    expect(watched.status).toBe(200);
    const prompt = await raw(t.url, "POST", `/v1/sessions/${id}/prompt`, {
      token: t.tokens.observer,
      body: { text: "hi" },
    });
    expect(prompt.status).toBe(403);
    expect(prompt.body.error).toMatchObject({ code: "forbidden" });
    const lowered = await raw(t.url, "POST", `/v1/sessions/${id}/prompt`, {
      token: admin(),
      body: { text: "hi" },
      headers: { "x-brain-role": "observer" },
    });
    expect(lowered.status).toBe(403);
    const badRole = await raw(t.url, "GET", `/v1/sessions/${id}?role=king`, { token: admin() });
    expect(badRole.status).toBe(400);
    const events = await collect(t.client({ token: t.tokens.observer }), id, (e) => e.seq === 1);
    expect(events[0]?.type).toBe("session.opened");
  });

  it("has one controller: another client gets 409 until it takes control", async () => {
    const id = await newSession();
    const as = (client: string) => ({ token: admin(), headers: { "x-brain-client": client } });
    const first = await raw(t.url, "POST", `/v1/sessions/${id}/prompt`, {
      ...as("tab-a"),
      body: { text: "a" },
    });
    expect(first.status).toBe(202);
    await collect(t.client(), id, settled(first.body.turn as string));
    const other = await raw(t.url, "POST", `/v1/sessions/${id}/prompt`, {
      ...as("tab-b"),
      body: { text: "b" },
    });
    expect(other.status).toBe(409);
    expect((other.body.error as { message: string }).message).toContain('controlled by client "tab-a"');
    const anonymous = await raw(t.url, "POST", `/v1/sessions/${id}/prompt`, {
      token: admin(),
      body: { text: "c" },
    });
    expect(anonymous.status).toBe(409);
    expect((await raw(t.url, "GET", `/v1/sessions/${id}`, { token: admin() })).body.controller).toBe("tab-a");
    const take = await raw(t.url, "POST", `/v1/sessions/${id}/control`, {
      ...as("tab-b"),
      body: { client: "tab-b" },
    });
    expect(take.body).toEqual({ controller: "tab-b", previous: "tab-a" });
    const now = await raw(t.url, "POST", `/v1/sessions/${id}/prompt`, {
      ...as("tab-b"),
      body: { text: "b" },
    });
    expect(now.status).toBe(202);
    const old = await raw(t.url, "POST", `/v1/sessions/${id}/interrupt`, as("tab-a"));
    expect(old.status).toBe(409);
    const badClient = await raw(t.url, "GET", `/v1/sessions/${id}`, {
      token: admin(),
      headers: { "x-brain-client": "bad client!" },
    });
    expect(badClient.status).toBe(400);
  });
});

describe("turns", () => {
  it("returns the turn id at once and streams the reply", async () => {
    const client = t.client();
    const id = await newSession();
    const { turn } = await client.prompt(id, "hello daemon");
    expect(turn).toMatch(/^[0-9a-f-]{36}$/);
    const events = await collect(client, id, settled(turn));
    expect(textOf(events)).toBe("echo #1: hello daemon");
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    expect(events.at(-1)?.data).toEqual({ status: "completed" });
  });

  it("refuses a prompt while a turn runs (409), an empty one (400), and a missing text (400)", async () => {
    const id = await newSession({ harness: "echo", config: slow });
    const first = await raw(t.url, "POST", `/v1/sessions/${id}/prompt`, {
      token: admin(),
      body: { text: "one two three four five six seven eight" },
    });
    expect(first.status).toBe(202);
    const second = await raw(t.url, "POST", `/v1/sessions/${id}/prompt`, {
      token: admin(),
      body: { text: "again" },
    });
    expect(second.status).toBe(409);
    expect((second.body.error as { message: string }).message).toContain("still running");
    const empty = await raw(t.url, "POST", `/v1/sessions/${id}/prompt`, {
      token: admin(),
      body: { text: "" },
    });
    expect(empty.status).toBe(400);
    expect(empty.body.error).toMatchObject({ field: "text", message: 'field "text": must not be empty' });
    const missing = await raw(t.url, "POST", `/v1/sessions/${id}/steer`, { token: admin(), body: {} });
    expect(missing.status).toBe(400);
    expect(missing.body.error).toMatchObject({ field: "text", message: 'field "text": required' });
    await raw(t.url, "POST", `/v1/sessions/${id}/interrupt`, { token: admin() });
    await collect(t.client(), id, settled(first.body.turn as string));
  });

  it("refuses images for a harness that takes none (400), and an image without bytes (400 naming it)", async () => {
    const id = await newSession();
    const png = { mime_type: "image/png", data: "iVBORw0KGgo=" };
    const none = await raw(t.url, "POST", `/v1/sessions/${id}/prompt`, {
      token: admin(),
      body: { text: "look", images: [png] },
    });
    expect(none.status).toBe(400);
    expect((none.body.error as { message: string }).message).toContain('harness "echo" does not take images');
    const empty = await raw(t.url, "POST", `/v1/sessions/${id}/prompt`, {
      token: admin(),
      body: { text: "look", images: [{ data: "" }] },
    });
    expect(empty.status).toBe(400);
    expect(empty.body.error).toMatchObject({ field: "images.0.data" });
    const path = await raw(t.url, "POST", `/v1/sessions/${id}/prompt`, {
      token: admin(),
      body: { text: "look", images: [{ path: "/etc/passwd" }] },
    });
    expect(path.status).toBe(400); // bytes only: the daemon reads no path a client names
  });

  it("steers and interrupts the running turn; with none running both get 409", async () => {
    const client = t.client();
    const id = await newSession({ harness: "echo", config: slow });
    const { turn } = await client.prompt(
      id,
      "one two three four five six seven eight nine ten eleven twelve",
    );
    await collect(client, id, (e) => e.type === "assistant.delta");
    expect(
      (await raw(t.url, "POST", `/v1/sessions/${id}/steer`, { token: admin(), body: { text: "left" } }))
        .status,
    ).toBe(202);
    await collect(
      client,
      id,
      (e) => e.type === "assistant.delta" && (e.data as { text: string }).text.includes("steered"),
    );
    expect((await raw(t.url, "POST", `/v1/sessions/${id}/interrupt`, { token: admin() })).status).toBe(202);
    const events = await collect(client, id, settled(turn));
    expect(events.at(-1)?.data).toEqual({ status: "interrupted" });
    expect(events.some((e) => e.type === "user.interrupt")).toBe(true);
    const none = await raw(t.url, "POST", `/v1/sessions/${id}/interrupt`, { token: admin() });
    expect(none.status).toBe(409);
    expect((none.body.error as { message: string }).message).toContain("no turn is running");
    const steer = await raw(t.url, "POST", `/v1/sessions/${id}/steer`, {
      token: admin(),
      body: { text: "x" },
    });
    expect(steer.status).toBe(409);
  });

  it("interrupts a turn whose harness is still starting: the runner is never prompted", async () => {
    const client = t.client();
    const { id } = await client.create({ harness: "echo", config: slow });
    const words = Array.from({ length: 300 }, (_, i) => `w${i}`);
    const { turn } = await client.prompt(id, words.join(" "));
    await client.interrupt(id);
    const events = await collect(client, id, settled(turn));
    expect(events.at(-1)?.data).toEqual({ status: "interrupted" });
    expect(textOf(events)).not.toContain(words.at(-1));
  });

  it("answers a permission request once: the second answer gets 409", async () => {
    const client = t.client();
    const id = await newSession({
      harness: "echo",
      config: { tools: ["echo"] },
      permissions: { tools: { echo: "ask" } },
    });
    const { turn } = await client.prompt(id, "echo: ping");
    const [asked] = (await collect(client, id, (e) => e.type === "permission.requested")).slice(-1);
    const requestId = (asked!.data as { id: string }).id;
    const view = await client.session(id);
    expect(view.pending?.map((p) => [p.kind, p.id])).toContainEqual(["permission.requested", requestId]);
    const wrongShape = await raw(t.url, "POST", `/v1/sessions/${id}/requests/${requestId}`, {
      token: admin(),
      body: { answer: "yes" },
    });
    expect(wrongShape.status).toBe(400);
    expect(wrongShape.body.error).toMatchObject({ field: "decision" });
    const badDecision = await raw(t.url, "POST", `/v1/sessions/${id}/requests/${requestId}`, {
      token: admin(),
      body: { decision: "maybe" },
    });
    expect(badDecision.status).toBe(400);
    const answers = await Promise.all(
      ["allow", "deny"].map((decision) =>
        raw(t.url, "POST", `/v1/sessions/${id}/requests/${requestId}`, {
          token: admin(),
          body: { decision },
        }),
      ),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409]);
    const events = await collect(client, id, settled(turn));
    const resolved = events.filter((e) => e.type === "permission.resolved");
    expect(resolved).toHaveLength(1);
    const unknown = await raw(t.url, "POST", `/v1/sessions/${id}/requests/nope`, {
      token: admin(),
      body: { decision: "allow" },
    });
    expect(unknown.status).toBe(409);
  });
});

describe("checkpoints, forks, restore, close, delete", () => {
  it("checkpoints, forks from it, and restores it into a directory", async () => {
    const client = t.client();
    const id = await newSession();
    await collect(client, id, settled((await client.prompt(id, "remember me")).turn));
    const checkpoint = await raw(t.url, "POST", `/v1/sessions/${id}/checkpoints`, { token: admin() });
    expect(checkpoint.status).toBe(201);
    expect(checkpoint.body.files).toEqual([
      { path: "echo.jsonl", size: expect.any(Number), append_only: true },
    ]);
    const fork = await raw(t.url, "POST", `/v1/sessions/${id}/fork`, { token: admin(), body: {} });
    expect(fork.status).toBe(201);
    expect(fork.body.forked_from).toEqual({ session: id, checkpoint: checkpoint.body.id });
    const forkId = fork.body.id as string;
    const reply = await collect(client, forkId, settled((await client.prompt(forkId, "again")).turn));
    expect(textOf(reply)).toBe("echo #2: again");
    const badCheckpoint = await raw(t.url, "POST", `/v1/sessions/${id}/fork`, {
      token: admin(),
      body: { checkpoint: "99" },
    });
    expect(badCheckpoint.status).toBe(400);
    expect(badCheckpoint.body.error).toMatchObject({ field: "checkpoint" });
    const into = join(mkdtempSync(join(tmpdir(), "brain-restore-")), "native");
    try {
      const restore = await raw(t.url, "POST", `/v1/sessions/${id}/restore`, {
        token: admin(),
        body: { into },
      });
      expect(restore.status, JSON.stringify(restore.body)).toBe(200);
      expect(readdirSync(into)).toEqual(["echo.jsonl"]);
    } finally {
      rmSync(join(into, ".."), { recursive: true, force: true });
    }
    const relative = await raw(t.url, "POST", `/v1/sessions/${id}/restore`, {
      token: admin(),
      body: { into: "rel/dir" },
    });
    expect(relative.status).toBe(400);
    expect(relative.body.error).toMatchObject({
      field: "into",
      message: 'field "into": must be an absolute path',
    });
  });

  it("refuses a checkpoint while a turn runs (409), and restore to another tenant (403)", async () => {
    const client = t.client();
    const id = await newSession({ harness: "echo", config: slow });
    const { turn } = await client.prompt(id, "one two three four five six");
    const busy = await raw(t.url, "POST", `/v1/sessions/${id}/checkpoints`, { token: admin() });
    expect(busy.status).toBe(409);
    await collect(client, id, settled(turn));
    const theirs = await newSession({ harness: "echo" }, t.tokens.other);
    const restore = await raw(t.url, "POST", `/v1/sessions/${theirs}/restore`, {
      token: t.tokens.other,
      body: { into: join(tmpdir(), "brain-never-written") },
    });
    expect(restore.status).toBe(403);
  });

  it("closes (twice is fine), reopens on the next prompt, and deletes", async () => {
    const client = t.client();
    const id = await newSession();
    await collect(client, id, settled((await client.prompt(id, "one")).turn));
    expect((await client.close(id)).status).toBe("closed");
    expect((await client.close(id)).status).toBe("closed");
    const closed = await collect(client, id, (e) => e.type === "session.closed");
    expect(closed.at(-1)?.type).toBe("session.closed");
    const { turn } = await client.prompt(id, "two");
    const events = await collect(client, id, settled(turn));
    expect(textOf(events.filter((e) => e.turn === turn))).toBe("echo #2: two");
    expect((await client.session(id)).status).toBe("open");
    const del = await raw(t.url, "DELETE", `/v1/sessions/${id}`, { token: admin() });
    expect(del.status).toBe(204);
    expect((await raw(t.url, "GET", `/v1/sessions/${id}`, { token: admin() })).status).toBe(404);
  });

  it("serves a page of the log as JSON, and refuses a bad ?after=", async () => {
    const client = t.client();
    const id = await newSession();
    await collect(client, id, settled((await client.prompt(id, "hi")).turn));
    const page = await client.log(id, 2, 3);
    expect(page.events.map((e) => e.seq)).toEqual([3, 4, 5]);
    expect(page.last_seq).toBeGreaterThan(5);
    const bad = await raw(t.url, "GET", `/v1/sessions/${id}/log?after=-1`, { token: admin() });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ field: "after" });
    const badEvents = await raw(t.url, "GET", `/v1/sessions/${id}/events?after=x`, { token: admin() });
    expect(badEvents.status).toBe(400);
  });
});

describe("openapi", () => {
  it("describes every route with the zod schemas' JSON Schema", async () => {
    const doc = (await raw(t.url, "GET", "/openapi.json")).body as {
      openapi: string;
      paths: Record<
        string,
        Record<string, { requestBody?: { content: Record<string, { schema: unknown }> } }>
      >;
    };
    expect(doc.openapi).toBe("3.1.0");
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining([
        "/v1/sessions",
        "/v1/sessions/{id}",
        "/v1/sessions/{id}/prompt",
        "/v1/sessions/{id}/events",
        "/v1/sessions/{id}/requests/{requestId}",
        "/api/hitl/requests",
        "/api/hitl/requests/{requestId}/wait",
      ]),
    );
    const create = doc.paths["/v1/sessions"]!.post!.requestBody!.content["application/json"]!.schema as {
      properties: Record<string, unknown>;
      additionalProperties: boolean;
    };
    expect(Object.keys(create.properties)).toEqual(
      expect.arrayContaining(["harness", "agent", "id", "config", "provider", "permissions"]),
    );
    expect(create.additionalProperties).toBe(false);
  });
});

describe("agent definitions", () => {
  it("lists the agents in $BRAIN_HOME/agents and creates a session from one by id", async () => {
    const home = mkdtempSync(join(tmpdir(), "brain-agents-"));
    mkdirSync(join(home, "agents"));
    writeFileSync(
      join(home, "agents", "helper.yaml"),
      'adl: "1.0"\nid: helper\nname: Helper\ndescription: An echo helper\nharness:\n  type: echo\nsystemPrompt: Be brief.\n',
    );
    const d = await startTestDaemon({ home, agents: homeAgents(home) });
    try {
      const list = await raw(d.url, "GET", "/v1/agents", { token: d.tokens.admin });
      expect(list.body).toEqual({
        agents: [{ id: "helper", name: "Helper", description: "An echo helper" }],
      });
      const created = await raw(d.url, "POST", "/v1/sessions", {
        token: d.tokens.admin,
        body: { agent: "helper" },
      });
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({ harness: "echo", config: { system_prompt: "Be brief." } });
      const path = await raw(d.url, "POST", "/v1/sessions", {
        token: d.tokens.admin,
        body: { agent: "../agents/helper.yaml" },
      });
      expect(path.status).toBe(400); // only catalog ids, never a path the client chooses
      expect(path.body.error).toMatchObject({
        field: "agent",
        message: expect.stringContaining("known agents: helper"),
      });
    } finally {
      await d.cleanup();
      rmSync(home, { recursive: true, force: true });
    }
  });
});
