// The fault matrix, door side: the daemon's REST API (on the echo runner) against malformed and oversized
// input, missing, wrong and other-tenant tokens, cross-site requests and path traversal. The family column is
// "daemon": these doors are the same whatever harness a session runs on.
import { request } from "node:http";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestDaemon, type TestDaemon } from "../../src/testing/daemon.js";
import { raw } from "../../src/testing/http.js";
import { auditLog, type Cell, note } from "./audit.js";

let d: TestDaemon;
let open: TestDaemon;
let session: string;
beforeAll(async () => {
  d = await startTestDaemon();
  open = await startTestDaemon({ auth: false });
  const created = await raw(d.url, "POST", "/v1/sessions", {
    token: d.tokens.admin,
    body: { harness: "echo" },
  });
  session = created.body.id as string;
  const turn = await raw(d.url, "POST", `/v1/sessions/${session}/prompt`, {
    token: d.tokens.admin,
    body: { text: "hello" },
  });
  expect(turn.status).toBeLessThan(300);
});
afterAll(async () => {
  await d?.cleanup();
  await open?.cleanup();
});

/** After every door test the session's log is still whole; the cell notes it. */
function logIntact(cell: Cell): void {
  const audit = auditLog(join(d.home, "sessions", session, "events.jsonl"));
  note(cell, { eventsLost: audit.eventsLost, secretsFound: 0 });
  expect(audit.corrupt).toEqual([]);
}

const admin = () => ({ token: d.tokens.admin });

/** A POST whose body is streamed without Content-Length (chunked). */
function chunkedPost(url: string, path: string, token: string, bytes: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    });
    req.on("response", (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
      req.destroy();
    });
    req.on("error", (err) => (req.destroyed ? undefined : reject(err)));
    const chunk = Buffer.alloc(1 << 20, 0x20);
    let sent = 0;
    const pump = () => {
      while (sent < bytes) {
        sent += chunk.length;
        if (!req.write(chunk)) return void req.once("drain", pump);
      }
      req.end();
    };
    pump();
  });
}

/** The status of an event-stream request; the stream itself (which never ends) is dropped. */
async function streamStatus(path: string, headers: Record<string, string>): Promise<number> {
  const abort = new AbortController();
  const res = await fetch(`${d.url}${path}`, {
    headers: { authorization: `Bearer ${d.tokens.admin}`, ...headers },
    signal: abort.signal,
  });
  abort.abort();
  return res.status;
}

describe("malformed REST input", () => {
  it("daemon", async (cell) => {
    const notJson = await raw(d.url, "POST", "/v1/sessions", { ...admin(), body: "{not json" });
    const wrongShape = await raw(d.url, "POST", `/v1/sessions/${session}/prompt`, {
      ...admin(),
      body: { text: 42 },
    });
    const unknownField = await raw(d.url, "POST", "/v1/sessions", {
      ...admin(),
      body: { harness: "echo", surprise: true },
    });
    logIntact(cell);
    for (const r of [notJson, wrongShape, unknownField]) {
      expect(r.status).toBe(400);
      expect(JSON.stringify(r.body)).toMatch(/bad_request/);
    }
    expect(JSON.stringify(notJson.body)).toMatch(/not valid JSON/);
  });

  it("daemon (nested 5,000 deep)", async (cell) => {
    const deep = `${'{"a":'.repeat(5_000)}1${"}".repeat(5_000)}`;
    const body = `{"harness":"echo","config":{"options":${deep}}}`;
    const r = await raw(d.url, "POST", "/v1/sessions", { ...admin(), body });
    logIntact(cell);
    expect(r.status).toBe(400);
  });

  it("daemon (Last-Event-ID)", async (cell) => {
    const values = ["1e3", "0x10", "99999999999999999999"];
    const statuses = await Promise.all(
      values.flatMap((v) => [
        streamStatus(`/v1/sessions/${session}/events`, { "last-event-id": v }),
        streamStatus(`/v1/sessions/${session}/events?after=${encodeURIComponent(v)}`, {}),
      ]),
    );
    logIntact(cell);
    expect(statuses).toEqual(statuses.map(() => 400));
  });
});

describe("oversized REST input", () => {
  it("daemon", async (cell) => {
    const r = await raw(d.url, "POST", `/v1/sessions/${session}/prompt`, {
      ...admin(),
      body: { text: "x".repeat(9 << 20) },
    });
    logIntact(cell);
    expect(r.status).toBe(413);
    expect(JSON.stringify(r.body)).toMatch(/MiB/);
  });

  it("daemon (5 MiB prompt)", async (cell) => {
    const r = await raw(d.url, "POST", `/v1/sessions/${session}/prompt`, {
      ...admin(),
      body: { text: "x".repeat(5 << 20) },
    });
    logIntact(cell);
    expect(r.status).toBe(413);
    expect(JSON.stringify(r.body)).toMatch(/4 MiB/);
  });

  it("daemon (no Content-Length)", async (cell) => {
    const status = await chunkedPost(d.url, `/v1/sessions/${session}/prompt`, d.tokens.admin, 24 << 20);
    logIntact(cell);
    expect(status).toBe(413);
  });
});

describe("missing, wrong and other-tenant tokens", () => {
  it("daemon", async (cell) => {
    const missing = await raw(d.url, "GET", `/v1/sessions/${session}`);
    const wrong = await raw(d.url, "GET", `/v1/sessions/${session}`, { token: "brain_not-a-token" });
    const otherRead = await raw(d.url, "GET", `/v1/sessions/${session}`, { token: d.tokens.other });
    const otherPrompt = await raw(d.url, "POST", `/v1/sessions/${session}/prompt`, {
      token: d.tokens.other,
      body: { text: "not yours" },
    });
    const otherEvents = await raw(d.url, "GET", `/v1/sessions/${session}/events?after=0`, {
      token: d.tokens.other,
    });
    const observerPrompt = await raw(d.url, "POST", `/v1/sessions/${session}/prompt`, {
      token: d.tokens.observer,
      body: { text: "only watching" },
    });
    const list = await raw(d.url, "GET", "/v1/sessions", { token: d.tokens.other });
    logIntact(cell);
    expect(missing.status).toBe(401);
    expect(wrong.status).toBe(401);
    expect(otherRead.status).toBe(404);
    expect(otherPrompt.status).toBe(404);
    expect(otherEvents.status).toBe(404);
    expect(observerPrompt.status).toBe(403);
    expect(JSON.stringify(list.body)).not.toContain(session);
    const log = auditLog(join(d.home, "sessions", session, "events.jsonl"));
    expect(JSON.stringify(log.events)).not.toMatch(/not yours|only watching/);
  });
});

describe("provider settings from the client", () => {
  it("daemon (free api_key_env)", async (cell) => {
    const r = await raw(d.url, "POST", "/v1/sessions", {
      ...admin(),
      body: { harness: "echo", provider: { base_url: "http://127.0.0.1:9/v1", api_key_env: "PATH" } },
    });
    logIntact(cell);
    expect([400, 403]).toContain(r.status);
  });
});

describe("cross-site requests", () => {
  it("daemon", async (cell) => {
    const simple = await raw(open.url, "POST", "/v1/sessions", {
      body: JSON.stringify({ harness: "echo" }),
      headers: { "content-type": "text/plain", origin: "http://evil.com" },
    });
    const jsonFromEvil = await raw(open.url, "POST", "/v1/sessions", {
      body: { harness: "echo" },
      headers: { origin: "http://evil.com", "sec-fetch-site": "cross-site" },
    });
    const sessions = await raw(open.url, "GET", "/v1/sessions");
    note(cell, { eventsLost: 0, secretsFound: 0 });
    expect([403, 415]).toContain(simple.status);
    expect(jsonFromEvil.status).toBe(403);
    expect(sessions.body.sessions ?? []).toEqual([]);
  });
});

describe("path traversal", () => {
  it("daemon", async (cell) => {
    const probes = ["..%2F..%2Fetc", "%2e%2e", "..", "a%00b", "x".repeat(300)];
    const answers = await Promise.all(probes.map((p) => raw(d.url, "GET", `/v1/sessions/${p}`, admin())));
    const create = await raw(d.url, "POST", "/v1/sessions", {
      ...admin(),
      body: { harness: "echo", id: "../escape" },
    });
    logIntact(cell);
    for (const r of answers) expect([400, 404]).toContain(r.status);
    expect(create.status).toBe(400);
  });

  it("daemon (restore into $BRAIN_HOME)", async (cell) => {
    const cp = await raw(d.url, "POST", `/v1/sessions/${session}/checkpoints`, admin());
    expect(cp.status).toBeLessThan(300);
    const into = join(d.home, "sessions", session, "native", "restored");
    const r = await raw(d.url, "POST", `/v1/sessions/${session}/restore`, { ...admin(), body: { into } });
    logIntact(cell);
    expect(r.status).toBe(400);
    // and the answer shows no absolute $BRAIN_HOME path to a remote client
    expect(JSON.stringify(r.body)).not.toContain(d.home);
  });
});
