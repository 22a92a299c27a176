// The daemon's smaller doors, each closed: cross-site requests, non-JSON and oversized bodies (also without
// Content-Length), deep JSON, sloppy seqs, restores into Brain's own files or through links, paths of the
// daemon's machine or tokens in error bodies, client ids, and prompts no runner frame could carry.
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_EVENT_PAGE } from "../protocol/api.js";
import { MAX_PROMPT_BYTES } from "../protocol/runner.js";
import { startTestDaemon, type TestDaemon } from "../testing/daemon.js";
import { collect, newSession, raw, settled } from "../testing/http.js";

let open: TestDaemon; // --no-auth
let auth: TestDaemon;
beforeAll(async () => {
  [open, auth] = await Promise.all([startTestDaemon({ auth: false }), startTestDaemon()]);
});
afterAll(async () => {
  await Promise.all([open.cleanup(), auth.cleanup()]);
});

const json = { "content-type": "application/json" };

describe("cross-site requests", () => {
  it("are refused on --no-auth: a foreign Origin or Sec-Fetch-Site changes nothing", async () => {
    const before = (await raw(open.url, "GET", "/v1/sessions")).body.sessions as unknown[];
    const evil = await raw(open.url, "POST", "/v1/sessions", {
      body: '{"harness":"echo"}',
      headers: { "content-type": "text/plain", origin: "http://evil.com" },
    });
    expect(evil.status).toBe(403);
    expect(evil.body.error).toMatchObject({ code: "forbidden" });
    expect(String((evil.body.error as { message: string }).message)).toContain("http://evil.com");
    const fetchSite = await raw(open.url, "POST", "/v1/sessions", {
      body: { harness: "echo" },
      headers: { "sec-fetch-site": "cross-site" },
    });
    expect(fetchSite.status).toBe(403);
    const nullOrigin = await raw(open.url, "POST", "/v1/sessions", {
      body: { harness: "echo" },
      headers: { origin: "null" },
    });
    expect(nullOrigin.status).toBe(403);
    expect((await raw(open.url, "GET", "/v1/sessions")).body.sessions).toEqual(before);
  });

  it("refuses them with a token too, and lets the daemon's own pages and plain clients through", async () => {
    const evil = await raw(auth.url, "POST", "/v1/sessions", {
      token: auth.tokens.admin,
      body: { harness: "echo" },
      headers: { origin: "http://evil.com", "sec-fetch-site": "cross-site" },
    });
    expect(evil.status).toBe(403);
    const same = await raw(open.url, "POST", "/v1/sessions", {
      body: { harness: "echo" },
      headers: { origin: open.url, "sec-fetch-site": "same-origin" },
    });
    expect(same.status).toBe(201);
    expect((await raw(open.url, "POST", "/v1/sessions", { body: { harness: "echo" } })).status).toBe(201);
    // Reading is not changing state: a GET with a foreign Origin still gets its (CORS-less) answer.
    expect((await raw(open.url, "GET", "/healthz", { headers: { origin: "http://evil.com" } })).status).toBe(
      200,
    );
  });
});

describe("request bodies", () => {
  it("must be JSON: text/plain or form bodies get 415", async () => {
    for (const type of [
      "text/plain",
      "application/x-www-form-urlencoded",
      "multipart/form-data; boundary=x",
    ]) {
      const res = await raw(open.url, "POST", "/v1/sessions", {
        body: '{"harness":"echo"}',
        headers: { "content-type": type },
      });
      expect(res.status, type).toBe(415);
      expect(res.body.error).toMatchObject({ code: "unsupported_media_type" });
      expect(String((res.body.error as { message: string }).message)).toContain("application/json");
    }
    const charset = await raw(open.url, "POST", "/v1/sessions", {
      body: '{"harness":"echo"}',
      headers: { "content-type": "application/json; charset=utf-8" },
    });
    expect(charset.status).toBe(201);
  });

  it("without Content-Length are counted as they arrive: 413 past the limit, the rest never read", async () => {
    let pulled = 0;
    const chunk = new Uint8Array(1 << 20).fill(0x20);
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (pulled >= 64 << 20) return controller.close();
        pulled += chunk.length;
        controller.enqueue(chunk);
      },
    });
    const res = await open.daemon.app.request("http://127.0.0.1/v1/sessions", {
      method: "POST",
      headers: { ...json, host: "127.0.0.1", "transfer-encoding": "chunked" },
      body,
      duplex: "half",
    } as RequestInit);
    expect(res.status).toBe(413);
    expect(((await res.json()) as { error: { code: string; message: string } }).error).toMatchObject({
      code: "payload_too_large",
      message: expect.stringContaining("8 MiB"),
    });
    expect(pulled).toBeLessThan(16 << 20);
  });

  it("nested too deep get 400 naming where, not a stack overflow", async () => {
    // Written by hand: JSON.stringify itself overflows on a value this deep.
    const options = `${'{"a":'.repeat(5000)}{}${"}".repeat(5000)}`;
    const res = await raw(open.url, "POST", "/v1/sessions", {
      body: `{"harness":"echo","config":{"options":${options}}}`,
      headers: json,
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: "bad_request", field: "config.options.a" });
    expect(String((res.body.error as { message: string }).message)).toContain("64 levels");
  });
});

describe("seqs", () => {
  it("are decimal integers in the safe range only", async () => {
    const id = await newSession(auth);
    for (const bad of ["1e3", "0x10", "99999999999999999999", " 7", "1.0", "-1"]) {
      const log = await raw(auth.url, "GET", `/v1/sessions/${id}/log?after=${encodeURIComponent(bad)}`, {
        token: auth.tokens.admin,
      });
      expect(log.status, bad).toBe(400);
    }
    // (fetch trims header values, so " 7" cannot be sent as one.)
    for (const bad of ["1e3", "0x10", "99999999999999999999", "1.0", "-1"]) {
      const stream = await raw(auth.url, "GET", `/v1/sessions/${id}/events`, {
        token: auth.tokens.admin,
        headers: { "last-event-id": bad },
      });
      expect(stream.status, bad).toBe(400);
      expect(stream.body.error).toMatchObject({ field: "Last-Event-ID" });
    }
    const good = await raw(auth.url, "GET", `/v1/sessions/${id}/log?after=0&limit=10`, {
      token: auth.tokens.admin,
    });
    expect(good.status).toBe(200);
  });

  it("page a log at most MAX_EVENT_PAGE events at a time: a larger limit is a 400 naming it, not the whole log", async () => {
    const id = await newSession(auth);
    const page = (limit: number) =>
      raw(auth.url, "GET", `/v1/sessions/${id}/log?limit=${limit}`, { token: auth.tokens.observer });
    expect((await page(MAX_EVENT_PAGE)).status).toBe(200);
    for (const limit of [MAX_EVENT_PAGE + 1, 999_999_999_999_999]) {
      const res = await page(limit);
      expect(res.status, String(limit)).toBe(400);
      expect(res.body.error).toMatchObject({ code: "bad_request", field: "limit" });
      expect((res.body.error as { message: string }).message).toContain(`at most ${MAX_EVENT_PAGE}`);
    }
    // Said as a page size: not "an event seq", which is what ?after= takes.
    const res = await raw(auth.url, "GET", `/v1/sessions/${id}/log?limit=abc`, {
      token: auth.tokens.observer,
    });
    expect(res.body.error).toMatchObject({ code: "bad_request", field: "limit" });
    expect((res.body.error as { message: string }).message).toBe(
      `limit must be a whole number of events a page, at most ${MAX_EVENT_PAGE}, not "abc"`,
    );
  });
});

describe("restore", () => {
  let id: string;
  let outside: string;
  let checkpoint: unknown;
  beforeAll(async () => {
    const client = auth.client();
    id = await newSession(auth);
    await collect(client, id, settled((await client.prompt(id, "keep me")).turn));
    const cp = await raw(auth.url, "POST", `/v1/sessions/${id}/checkpoints`, { token: auth.tokens.admin });
    expect(cp.status).toBe(201);
    checkpoint = cp.body.id;
    outside = mkdtempSync(join(tmpdir(), "brain-restore-doors-"));
  });
  afterAll(() => rmSync(outside, { recursive: true, force: true }));

  const restore = (into: string, checkpoint?: string) =>
    raw(auth.url, "POST", `/v1/sessions/${id}/restore`, {
      token: auth.tokens.admin,
      body: { into, ...(checkpoint ? { checkpoint } : {}) },
    });

  it("answers which checkpoint it restored, as `latest` leaves the caller to learn", async () => {
    const res = await restore(join(outside, "restored"));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual({ ok: true, checkpoint });
  });

  it("refuses a symlinked or dangling target with 400, not a raw ENOTDIR", async () => {
    const real = join(outside, "real");
    mkdirSync(real);
    symlinkSync(real, join(outside, "link"));
    symlinkSync(join(outside, "nowhere"), join(outside, "dangling"));
    for (const name of ["link", "dangling"]) {
      const res = await restore(join(outside, name));
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(String((res.body.error as { message: string }).message)).toContain("symbolic link");
    }
  });

  it("blames a target that cannot be a fresh directory on field into, saying what is in the way", async () => {
    const file = join(outside, "a-file");
    writeFileSync(file, "x");
    const full = join(outside, "full");
    mkdirSync(full);
    writeFileSync(join(full, "kept"), "x");
    const cases: [string, RegExp][] = [
      [file, /a-file is a file/],
      [full, /full is not empty/],
      [join(file, "below"), /a-file is not a directory, so .*below cannot be one/],
      [join(outside, "x\0y"), /field "into": must not contain a NUL byte/],
    ];
    // procfs makes no directories: mkdir there fails with ENOENT though the parent exists.
    if (existsSync("/proc/self")) cases.push(["/proc/self/restored", /file system does not create/]);
    for (const [into, message] of cases) {
      const res = await restore(into);
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(res.body.error).toMatchObject({ code: "bad_request", field: "into" });
      expect(String((res.body.error as { message: string }).message)).toMatch(message);
    }
    const unknown = await restore(join(outside, "fresh"), "nope");
    expect(unknown.body.error).toMatchObject({ field: "checkpoint" });
  });

  it("refuses any target inside $BRAIN_HOME, through links too, without showing its path", async () => {
    const other = await newSession(auth);
    const sessionDir = join(auth.home, "sessions", id);
    symlinkSync(auth.home, join(outside, "home-link"));
    const targets = [
      join(sessionDir, "native", "sub"),
      join(sessionDir, "checkpoints", "x"),
      join(auth.home, "sessions", other, "native2"),
      join(auth.home, "fresh"),
      join(outside, "home-link", "sessions", "new"),
    ];
    for (const into of targets) {
      const res = await restore(into);
      expect(res.status, into).toBe(400);
      const message = String((res.body.error as { message: string }).message);
      expect(message).toContain("inside $BRAIN_HOME");
      expect(message).not.toContain(auth.home);
    }
  });

  it("names no path of the daemon's machine in an error body", async () => {
    const res = await restore(join(outside, "fine"), "nope");
    expect(res.status).toBe(400);
    const message = String((res.body.error as { message: string }).message);
    // The log's checkpoints are named, not the store's directory.
    expect(message).toContain(`no checkpoint "nope" in the log of session ${id}`);
    expect(message).not.toContain(auth.home);
  });
});

describe("unknown routes", () => {
  it("get a 404 that names the path with its tokens and the daemon's home taken out", async () => {
    const token = auth.tokens.admin;
    const typo = await raw(auth.url, "GET", `/nui/${token}/api/hitl/request`);
    expect(typo.status).toBe(404);
    expect(typo.body.error).toMatchObject({
      code: "not_found",
      message: "no route GET /nui/[redacted:token]/api/hitl/request",
    });
    const home = await raw(auth.url, "GET", `/files${auth.home}/x`);
    expect(home.status).toBe(404);
    expect((home.body.error as { message: string }).message).toBe("no route GET /files$BRAIN_HOME/x");
  });
});

describe("client ids", () => {
  it("are checked the same in POST /control as in X-Brain-Client", async () => {
    const id = await newSession(auth);
    for (const client of ["has space", "a/b", "x".repeat(129), "<script>"]) {
      const header = await raw(auth.url, "GET", `/v1/sessions/${id}`, {
        token: auth.tokens.admin,
        headers: { "x-brain-client": client },
      });
      expect(header.status).toBe(400);
      const body = await raw(auth.url, "POST", `/v1/sessions/${id}/control`, {
        token: auth.tokens.admin,
        body: { client },
      });
      expect(body.status, client).toBe(400);
      expect(body.body.error).toMatchObject({ field: "client" });
    }
    const ok = await raw(auth.url, "POST", `/v1/sessions/${id}/control`, {
      token: auth.tokens.admin,
      body: { client: "tab-1:web.ui" },
    });
    expect(ok.status).toBe(200);
  });
});

describe("prompts", () => {
  it("too large for a runner frame get 413 naming the limit, and start no turn", async () => {
    const id = await newSession(auth);
    const res = await raw(auth.url, "POST", `/v1/sessions/${id}/prompt`, {
      token: auth.tokens.admin,
      body: { text: "x".repeat(5 << 20) },
    });
    expect(res.status).toBe(413);
    expect(res.body.error).toMatchObject({ code: "payload_too_large", field: "text" });
    expect(String((res.body.error as { message: string }).message)).toContain(String(MAX_PROMPT_BYTES));
    const view = await raw(auth.url, "GET", `/v1/sessions/${id}`, { token: auth.tokens.admin });
    expect(view.body.active_turn).toBeUndefined();
    expect(view.body.last_seq).toBe(1);
    // Escapes count: 1 MiB of newlines is 2 MiB as JSON, 3 MiB of them 6 MiB.
    const escaped = await raw(auth.url, "POST", `/v1/sessions/${id}/prompt`, {
      token: auth.tokens.admin,
      body: { text: "\n".repeat(3 << 20) },
    });
    expect(escaped.status).toBe(413);
  });
});

describe("session ids", () => {
  it("cannot be used by another tenant to learn which ids exist", async () => {
    const mine = await newSession(auth, { harness: "echo", id: "tenant-a-secret" });
    const probe = await raw(auth.url, "POST", "/v1/sessions", {
      token: auth.tokens.other,
      body: { harness: "echo", id: mine },
    });
    const fresh = await raw(auth.url, "POST", "/v1/sessions", {
      token: auth.tokens.other,
      body: { harness: "echo", id: "never-used-anywhere" },
    });
    // A taken id and a free one get the same answer: no 409 tells the tenant that someone holds it.
    expect(probe.status).toBe(fresh.status);
    expect(probe.body).toEqual(fresh.body);
    expect(probe.status).toBe(400);
    expect(probe.body.error).toMatchObject({ field: "id" });
    const own = await raw(auth.url, "POST", "/v1/sessions", {
      token: auth.tokens.other,
      body: { harness: "echo" },
    });
    expect(own.status).toBe(201);
    expect(own.body.id).toMatch(/^[0-9a-f-]{36}$/);
  });
});
