// The daemon's REST routes over real HTTP on loopback: every route, auth, tenants, roles, and every bad input
// the routes refuse (400 naming the field, 404 for unknown or foreign sessions, 409 for conflicts).

import http from "node:http";
import { describe, expect, it } from "vitest";
import type { NewSessionInput } from "../core/session-input.js";
import type { SessionEvent } from "../protocol/events.js";
import { startTestDaemon } from "../testing/daemon.js";
import { collect, newSession, raw, settled, textOf } from "../testing/http.js";
import { useTestDaemon } from "../testing/use-daemon.js";
import { startDaemon } from "./daemon.js";

const t = useTestDaemon();

const admin = () => t.tokens.admin;
const _slow = { options: { delay_ms: 40 } };

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

  it("serves the web UI with a content security policy, nosniff and no referrer", async () => {
    for (const path of ["/", "/ui/app.js", "/ui/style.css", "/ui/transcript.js"]) {
      const res = await fetch(`${t.url}${path}`);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-security-policy")).toBe(
        "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'",
      );
      expect(res.headers.get("x-frame-options")).toBe("DENY");
      expect(res.headers.get("x-content-type-options")).toBe("nosniff");
      expect(res.headers.get("referrer-policy")).toBe("no-referrer");
    }
  });

  it("sends every other answer as data nothing may run or frame: JSON, errors, 404s and the event stream", async () => {
    const { id } = await t.client().create({ harness: "echo" });
    const abort = new AbortController();
    for (const path of [
      ...["/v1/whoami", "/openapi.json", "/v1/sessions?limit=x", "/nothing", `/v1/sessions/${id}/events`],
      "/ui/%3Csvg%20onload=alert(1)%3E", // a 404 that quotes its path
      "/v1/sessions", // 401: no token
    ]) {
      const headers: Record<string, string> =
        path === "/v1/sessions" ? {} : { authorization: `Bearer ${admin()}` };
      const res = await fetch(`${t.url}${path}`, { headers, signal: abort.signal });
      expect(res.headers.get("content-security-policy"), path).toBe(
        "default-src 'none'; frame-ancestors 'none'",
      );
      expect(res.headers.get("x-frame-options"), path).toBe("DENY");
      expect(res.headers.get("x-content-type-options"), path).toBe("nosniff");
    }
    abort.abort(); // the event stream's
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
    const id = await newSession(t, { harness: "echo", id: "my-session", config: { tools: ["echo"] } });
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
    [
      { harness: "echo", permissions: { ask_timeout_ms: 2 ** 31 } },
      "permissions.ask_timeout_ms",
      "at most 2147483647",
    ],
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
    const id = await newSession(t);
    const res = await raw(t.url, "POST", `/v1/sessions/${id}/prompt`, {
      token: admin(),
      body: { text: "x".repeat(9 << 20) },
    });
    expect(res.status).toBe(413);
    expect((res.body.error as { message: string }).message).toContain("body over 8 MiB");
  });

  it("refuses a second session with the same id with 409", async () => {
    await newSession(t, { harness: "echo", id: "twice" });
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

describe("a client's permission policy", () => {
  // The operator denies echo by default and in the "locked" agent; the "open" agent allows everything.
  const deny = { tools: { echo: "deny" } } as const;
  const defined: Record<string, NewSessionInput> = {
    locked: { harness: "echo", config: { tools: ["echo"] }, permissions: deny },
    open: { harness: "echo", config: { tools: ["echo"] }, permissions: { default: "allow" } },
  };
  const agents = {
    list: async () => Object.keys(defined).map((id) => ({ id })),
    resolve: async (id: string) => defined[id],
  };

  async function echoTurn(d: Awaited<ReturnType<typeof startTestDaemon>>, body: object) {
    const created = await raw(d.url, "POST", "/v1/sessions", { token: d.tokens.admin, body });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const id = created.body.id as string;
    const { turn } = await d.client().prompt(id, "echo: secret-op");
    const events = await collect(d.client(), id, settled(turn));
    const of = (type: string) =>
      events.find((e: SessionEvent) => e.type === type)?.data as Record<string, unknown>;
    return {
      id,
      view: created.body,
      result: of("tool.result"),
      requested: of("permission.requested"),
      resolved: of("permission.resolved"),
    };
  }

  it("cannot lift the operator's deny; the session view shows both policies", async () => {
    const d = await startTestDaemon({ agents, defaults: { permissions: deny } });
    try {
      for (const body of [
        { agent: "locked", permissions: { default: "allow" } },
        { agent: "locked", permissions: { tools: { "*": "allow" }, ask_timeout_ms: 5 } },
        { harness: "echo", config: { tools: ["echo"] }, permissions: {} },
      ]) {
        const { id, view, result } = await echoTurn(d, body);
        expect(result, JSON.stringify(body)).toMatchObject({ is_error: true });
        expect(JSON.stringify(result.content)).toContain("denied");
        expect(view).toMatchObject({ permissions: deny, client_permissions: body.permissions });
        const got = await raw(d.url, "GET", `/v1/sessions/${id}`, { token: d.tokens.admin });
        expect(got.body).toMatchObject({ permissions: deny, client_permissions: body.permissions });
      }
    } finally {
      await d.cleanup();
    }
  });

  it("can tighten the operator's allow to ask or deny, and keeps both through a handoff", async () => {
    const d = await startTestDaemon({ agents });
    try {
      expect((await echoTurn(d, { agent: "open" })).result).toMatchObject({ is_error: false });
      const denied = await echoTurn(d, { agent: "open", permissions: deny });
      expect(denied.result).toMatchObject({ is_error: true });
      // An ask the client's own timeout (0) denies at once: nobody needs to answer for the test.
      const tightened = { tools: { echo: "ask" }, ask_timeout_ms: 0 };
      const asked = await echoTurn(d, { agent: "open", permissions: tightened });
      expect(asked.requested).toMatchObject({ tool: "echo" });
      expect(asked.resolved).toMatchObject({ decision: "deny" });
      expect(asked.result).toMatchObject({ is_error: true });
      const moved = await raw(d.url, "POST", `/v1/sessions/${asked.id}/handoff`, {
        token: d.tokens.admin,
        body: { to: "echo" },
      });
      expect(moved.status, JSON.stringify(moved.body)).toBe(201);
      expect(moved.body).toMatchObject({ permissions: { default: "allow" }, client_permissions: tightened });
    } finally {
      await d.cleanup();
    }
  });
});

describe("a session whose harness this daemon does not offer", () => {
  it("can be read and watched, not driven (409 naming the harness)", async () => {
    const id = await newSession(t);
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
    const id = await newSession(t);
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
    const mine = await newSession(t, { harness: "echo" }, t.tokens.other);
    const seen = await raw(t.url, "GET", "/v1/sessions", { token: t.tokens.other });
    expect((seen.body.sessions as { id: string; tenant: string }[]).map((s) => [s.id, s.tenant])).toEqual([
      [mine, "acme"],
    ]);
    expect((await raw(t.url, "GET", `/v1/sessions/${mine}`, { token: admin() })).status).toBe(404);
  });

  it("lets an observer watch but not drive (403), by token or by request", async () => {
    const id = await newSession(t);
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
    const id = await newSession(t);
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
    expect(other.body.error).toMatchObject({
      code: "conflict",
      reason: "controlled",
      controller: "tab-a",
      message: expect.stringContaining('controlled by client "tab-a"'),
    });
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
