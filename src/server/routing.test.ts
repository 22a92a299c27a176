// Cluster mode's forwarding, on one node: a command for a session not open here goes to its owner only once its
// caller is known and allowed, with a body read under the same limit as one read here. The router here only
// records what it is asked (this node's side needs no NATS; test/cluster runs the real thing).
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startTestDaemon, type TestDaemon } from "../testing/daemon.js";
import { collect, raw, settled } from "../testing/http.js";
import { type CommandRouter, type RoutedRequest, runHere } from "./routing.js";

const forwarded: RoutedRequest[] = [];
/** Whether each forwarded request may be sent again (ForwardOptions.retry). */
const retried: boolean[] = [];
const located: string[] = [];
const tenantsAsked: string[] = [];
/**
 * Another node owns session "elsewhere" and has HITL requests "hr-elsewhere" and "shared-id" pending in it, both
 * the default tenant's.
 */
const router: CommandRouter = {
  serve: () => () => {},
  async forward(session, request, options) {
    if (session !== "elsewhere") return undefined;
    forwarded.push(request);
    retried.push(options?.retry === true);
    return { status: 202, contentType: "application/json", body: '{"owner":"other"}' };
  },
  serveLocate: () => () => {},
  async locate(requestId, tenant) {
    located.push(requestId);
    tenantsAsked.push(tenant);
    return requestId === "hr-elsewhere" || requestId === "shared-id" ? "elsewhere" : undefined;
  },
};

let d: TestDaemon;
beforeAll(async () => {
  d = await startTestDaemon({ router });
});
afterAll(() => d.cleanup());
beforeEach(() => {
  forwarded.length = 0;
  retried.length = 0;
  located.length = 0;
  tenantsAsked.length = 0;
});

/** A chunked body of `mib` MiB pulled as the daemon reads it; `pulled()` says how much it read. */
function largeBody(mib: number) {
  let pulled = 0;
  const chunk = new Uint8Array(1 << 20).fill(0x20);
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (pulled >= mib << 20) return controller.close();
      pulled += chunk.length;
      controller.enqueue(chunk);
    },
  });
  return { body, pulled: () => pulled };
}

const post = (path: string, body: ReadableStream<Uint8Array>, token?: string) =>
  d.daemon.app.request(`http://127.0.0.1${path}`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "transfer-encoding": "chunked",
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body,
    duplex: "half",
  } as RequestInit);

describe("forwarding a command to the session's owner", () => {
  it("refuses a caller without a token before reading its body or asking the router", async () => {
    const big = largeBody(64);
    const res = await post("/v1/sessions/elsewhere/prompt", big.body);
    expect(res.status).toBe(401);
    expect(big.pulled()).toBeLessThan(16 << 20);
    const wrong = largeBody(64);
    expect((await post("/v1/sessions/elsewhere/prompt", wrong.body, "not-a-token")).status).toBe(401);
    expect(wrong.pulled()).toBeLessThan(16 << 20);
    expect(forwarded).toEqual([]);
  });

  it("reads an allowed caller's body under the limit: 413 past it, nothing forwarded", async () => {
    const big = largeBody(64);
    const res = await post("/v1/sessions/elsewhere/prompt", big.body, d.tokens.admin);
    expect(res.status).toBe(413);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("payload_too_large");
    expect(big.pulled()).toBeLessThan(16 << 20);
    expect(forwarded).toEqual([]);
  });

  it("refuses an observer's command here, and forwards a controller's with its body and credentials", async () => {
    const observer = await raw(d.url, "POST", "/v1/sessions/elsewhere/prompt", {
      token: d.tokens.observer,
      body: { text: "hi" },
    });
    expect(observer.status).toBe(403);
    expect(forwarded).toEqual([]);
    const res = await raw(d.url, "POST", "/v1/sessions/elsewhere/prompt", {
      token: d.tokens.admin,
      body: { text: "hi" },
    });
    expect([res.status, res.body]).toEqual([202, { owner: "other" }]);
    expect(forwarded).toHaveLength(1);
    expect(forwarded[0]).toMatchObject({
      method: "POST",
      path: "/v1/sessions/elsewhere/prompt",
      headers: { authorization: `Bearer ${d.tokens.admin}` },
    });
    expect(JSON.parse(forwarded[0]!.body!)).toEqual({ text: "hi" });
  });

  it("forwards a command whose client sent x-brain-routed itself: only this node marks a request as forwarded", async () => {
    for (const value of ["1", "true"]) {
      const res = await raw(d.url, "POST", "/v1/sessions/elsewhere/prompt", {
        token: d.tokens.admin,
        body: { text: "hi" },
        headers: { "x-brain-routed": value },
      });
      expect([res.status, res.body]).toEqual([202, { owner: "other" }]);
    }
    const hitl = await raw(d.url, "DELETE", "/api/hitl/requests/hr-elsewhere", {
      token: d.tokens.admin,
      headers: { "x-brain-routed": "1" },
    });
    expect([hitl.status, hitl.body]).toEqual([202, { owner: "other" }]);
    expect(forwarded).toHaveLength(3);
    // What this node's router hands it from another node runs here, never sent on again.
    const here = await runHere(d.daemon.app, {
      method: "POST",
      path: "/v1/sessions/elsewhere/prompt",
      headers: { authorization: `Bearer ${d.tokens.admin}`, "content-type": "application/json" },
      body: JSON.stringify({ text: "hi" }),
    });
    expect(here.status).toBe(404);
    expect(forwarded).toHaveLength(3);
  });

  it("forwards a command whose path is %-escaped, as the route that would run it reads the path", async () => {
    const paths = [
      "/v1/sessions/%65lsewhere/prompt",
      "/v1/%73essions/elsewhere/prompt",
      "/v1/sessions/elsewhere/%70rompt",
    ];
    for (const path of paths) {
      const res = await raw(d.url, "POST", path, { token: d.tokens.admin, body: { text: "hi" } });
      expect([res.status, res.body], path).toEqual([202, { owner: "other" }]);
    }
    expect(forwarded.map((r) => r.path)).toEqual(paths);
    // A keyed command gets its key however its path is written: the owner then runs it once.
    expect(forwarded.every((r) => r.headers["idempotency-key"]?.startsWith("fwd-"))).toBe(true);
    const hitl = await raw(d.url, "DELETE", "/api/%68itl/requests/hr-elsewhere", { token: d.tokens.admin });
    expect([hitl.status, hitl.body]).toEqual([202, { owner: "other" }]);
    expect(located).toEqual(["hr-elsewhere"]);
  });

  it("lets a keyed take of control and a keyed delete be sent again, an unkeyed delete not", async () => {
    const keyed = { token: d.tokens.admin, headers: { "Idempotency-Key": "k-1" } };
    const control = await raw(d.url, "POST", "/v1/sessions/elsewhere/control", {
      ...keyed,
      body: { client: "a" },
    });
    expect(control.status).toBe(202);
    expect((await raw(d.url, "DELETE", "/v1/sessions/elsewhere", keyed)).status).toBe(202);
    expect((await raw(d.url, "DELETE", "/v1/sessions/elsewhere", { token: d.tokens.admin })).status).toBe(
      202,
    );
    expect(forwarded.map((r) => [r.method, r.headers["idempotency-key"]])).toEqual([
      ["POST", "k-1"],
      ["DELETE", "k-1"],
      ["DELETE", undefined],
    ]);
    expect(retried).toEqual([true, true, false]);
  });

  it("answers a HITL answer with a malformed %-escape with 401 without a token, 400 naming it with one", async () => {
    for (const path of ["/api/hitl/requests/%E0%A4%A", `/nui/x/api/hitl/requests/%E0%A4%A/respond`]) {
      const method = path.endsWith("/respond") ? "POST" : "DELETE";
      const anonymous = await raw(d.url, method, path, method === "POST" ? { body: {} } : {});
      expect(anonymous.status, path).toBe(401);
    }
    const res = await raw(d.url, "DELETE", "/api/hitl/requests/%E0%A4%A", { token: d.tokens.admin });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: "bad_request", field: "requestId" });
    expect(String((res.body.error as { message: string }).message)).toContain("%-escape");
    expect(located).toEqual([]);
  });

  it("finds the session of a HITL answer pending on another node only for an allowed caller", async () => {
    const anonymous = await raw(d.url, "DELETE", "/api/hitl/requests/hr-elsewhere");
    expect(anonymous.status).toBe(401);
    expect(located).toEqual([]);
    const res = await raw(d.url, "DELETE", `/nui/${d.tokens.admin}/api/hitl/requests/hr-elsewhere`);
    expect([res.status, res.body]).toEqual([202, { owner: "other" }]);
    expect(located).toEqual(["hr-elsewhere"]);
    expect(forwarded[0]).toMatchObject({ method: "DELETE" });
  });

  it("sends a HITL answer to its tenant's request elsewhere, though another tenant has the same id pending here", async () => {
    // nui's request ids are the client's: tenant "other" holds "shared-id" here, in a turn kept running.
    const token = d.tokens.other;
    const client = d.client({ token });
    const { id } = await client.create({ harness: "echo", config: { options: { delay_ms: 25 } } });
    const { turn } = await client.prompt(id, Array.from({ length: 400 }, (_, i) => `w${i}`).join(" "));
    const body = { kind: "approval", sessionId: id, requestId: "shared-id", payload: { toolName: "x" } };
    expect((await raw(d.url, "POST", "/api/hitl/requests", { token, body })).status).toBe(201);
    const answer = { status: "answered", answers: { approved: true } };
    const res = await raw(d.url, "POST", "/api/hitl/requests/shared-id/respond", {
      token: d.tokens.admin,
      body: answer,
    });
    expect([res.status, res.body]).toEqual([202, { owner: "other" }]);
    expect(tenantsAsked).toEqual(["default"]);
    expect(forwarded).toHaveLength(1);
    await client.interrupt(id);
    await collect(client, id, settled(turn));
  });
});

describe("a HITL answer naming its session", () => {
  it("goes to that session's owner, without looking the request id up", async () => {
    // The id is pending in several sessions: the answer names the one it is for (?sessionId=).
    const path = "/api/hitl/requests/any-id/respond?sessionId=elsewhere";
    const res = await raw(d.url, "POST", path, { token: d.tokens.admin, body: { answers: { answer: "a" } } });
    expect([res.status, res.body]).toEqual([202, { owner: "other" }]);
    expect(forwarded.map((r) => r.path)).toEqual([path]);
    expect(located).toEqual([]);
  });

  it("lists a session's HITL requests from its owner, only for an allowed caller", async () => {
    const path = "/api/hitl/requests?pending=true&sessionId=elsewhere";
    expect((await raw(d.url, "GET", path)).status).toBe(401);
    expect(forwarded).toEqual([]);
    const res = await raw(d.url, "GET", path, { token: d.tokens.admin });
    expect([res.status, res.body]).toEqual([202, { owner: "other" }]);
    expect(forwarded).toMatchObject([{ method: "GET", path }]);
    // One request by id: found where it is pending, as an answer is.
    const got = await raw(d.url, "GET", "/api/hitl/requests/hr-elsewhere", { token: d.tokens.admin });
    expect([got.status, got.body]).toEqual([202, { owner: "other" }]);
    expect(located).toEqual(["hr-elsewhere"]);
  });
});
