// nui's HITL API on the daemon: requests become Brain permission requests and questions of the running turn,
// any pending Brain request can be listed and answered in nui's envelopes, answers count once, and nui's own
// Python client (sdk/python/nui_hitl.py) works unchanged with NUI_API_URL=<daemon>/nui/<token>.
import { spawn } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { DEFAULT_ASK_TIMEOUT_MS } from "../core/permissions.js";
import { MAX_UNANSWERED_HITL } from "../harnesses/nui/hitl-desk.js";
import { MAX_HITL_TTL_SECONDS } from "../protocol/nui/hitl.js";
import { collect, raw, settled } from "../testing/http.js";
import { useTestDaemon } from "../testing/use-daemon.js";

const t = useTestDaemon();

const long = Array.from({ length: 400 }, (_, i) => `w${i}`).join(" ");

/** A session with a turn that runs for a while (the echo runner, 25 ms a word). */
async function running() {
  const client = t.client();
  const { id } = await client.create({ harness: "echo", config: { options: { delay_ms: 25 } } });
  const { turn } = await client.prompt(id, long);
  return { client, id, turn };
}

const hitl = (method: string, path: string, body?: unknown, token = t.tokens.admin) =>
  raw(t.url, method, `/api/hitl/requests${path}`, { token, ...(body !== undefined ? { body } : {}) });

describe("nui HITL API", () => {
  it("turns an approval into a permission request of the running turn; respond answers it once", async () => {
    const { client, id, turn } = await running();
    const created = await hitl("POST", "", {
      kind: "approval",
      sessionId: id,
      requestId: "req-approve-1",
      payload: { title: "Deploy", message: "Ship it?", toolName: "deploy", toolInput: { env: "prod" } },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toMatchObject({
      requestId: "req-approve-1",
      sessionId: id,
      runId: turn,
      kind: "approval",
    });
    const asked = await collect(client, id, (e) => e.type === "permission.requested");
    expect(asked.at(-1)?.data).toMatchObject({
      id: "req-approve-1",
      tool: "deploy",
      arguments: { env: "prod" },
    });
    const list = await hitl("GET", `?pending=true&sessionId=${id}`);
    expect((list.body as unknown as { requestId: string }[]).map((r) => r.requestId)).toEqual([
      "req-approve-1",
    ]);
    expect((await hitl("GET", "/req-approve-1")).body).toMatchObject({ kind: "approval" });
    const waiting = hitl("GET", "/req-approve-1/wait");
    const respond = await hitl("POST", "/req-approve-1/respond", {
      status: "answered",
      answers: { approved: true },
    });
    expect(respond.status, JSON.stringify(respond.body)).toBe(200);
    expect(respond.body).toMatchObject({ requestId: "req-approve-1", status: "answered" });
    const waited = await waiting;
    expect(waited.body).toMatchObject({
      requestId: "req-approve-1",
      status: "answered",
      answers: { approved: true },
    });
    const again = await hitl("POST", "/req-approve-1/respond", { status: "declined" });
    expect(again.status).toBe(409);
    const done = await hitl("GET", "/req-approve-1/wait");
    expect(done.body).toMatchObject({ status: "answered" });
    await client.interrupt(id);
    await collect(client, id, settled(turn));
  });

  it("turns a question into a Brain question answered from /v1; wait gets the answer keyed by question", async () => {
    const { client, id, turn } = await running();
    const created = await hitl("POST", "", {
      kind: "question",
      sessionId: id,
      payload: { questions: [{ question: "Which colour?", options: ["red", "blue"] }] },
    });
    expect(created.status).toBe(201);
    const requestId = created.body.requestId as string;
    const asked = await collect(client, id, (e) => e.type === "question.requested");
    expect(asked.at(-1)?.data).toEqual({
      id: requestId,
      question: "Which colour?",
      options: ["red", "blue"],
      expires_at: created.body.expiresAt,
    });
    const waiting = hitl("GET", `/${requestId}/wait`);
    await client.answer(id, requestId, { answer: "blue" });
    expect((await waiting).body).toMatchObject({ status: "answered", answers: { "Which colour?": "blue" } });
    await client.interrupt(id);
    await collect(client, id, settled(turn));
  });

  it("refuses a request past the unanswered ones a session holds with 429, as nui's API does", async () => {
    const { client, id, turn } = await running();
    for (let i = 0; i < MAX_UNANSWERED_HITL; i++) {
      const made = await hitl("POST", "", {
        kind: "question",
        sessionId: id,
        payload: { question: `q${i}` },
      });
      expect(made.status, JSON.stringify(made.body)).toBe(201);
    }
    const refused = await hitl("POST", "", {
      kind: "question",
      sessionId: id,
      payload: { question: "more" },
    });
    expect(refused.status).toBe(429);
    expect(refused.body.error).toMatchObject({
      code: "limit_reached",
      message: expect.stringContaining(`has ${MAX_UNANSWERED_HITL} HITL requests waiting for an answer`),
    });
    await client.interrupt(id);
    await collect(client, id, settled(turn));
  });

  it("makes requests in a session closed and opened again (a new run on a new Session)", async () => {
    const { client, id, turn } = await running();
    const approval = (requestId: string) => ({
      kind: "approval",
      sessionId: id,
      requestId,
      payload: { toolName: "deploy" },
    });
    expect((await hitl("POST", "", approval("before-close"))).status).toBe(201);
    await client.interrupt(id);
    await collect(client, id, settled(turn));
    await client.close(id);
    const again = await client.prompt(id, long);
    const created = await hitl("POST", "", approval("after-reopen"));
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toMatchObject({ requestId: "after-reopen", runId: again.turn });
    const asked = await collect(
      client,
      id,
      (e) => e.type === "permission.requested" && (e.data as { id: string }).id === "after-reopen",
    );
    expect(asked.at(-1)).toMatchObject({ turn: again.turn, data: { tool: "deploy" } });
    await client.interrupt(id);
    await collect(client, id, settled(again.turn));
  });

  it("lists a request made here as the log holds it: a value the log redacts is redacted in the list and by id", async () => {
    const { client, id, turn } = await running();
    const secret = t.tokens.other; // one of the host's secrets
    const created = await hitl("POST", "", {
      kind: "approval",
      sessionId: id,
      requestId: "req-with-secret",
      payload: { toolName: "deploy", toolInput: { key: secret } },
    });
    expect(created.status).toBe(201);
    const asked = await collect(client, id, (e) => e.type === "permission.requested");
    expect(asked.at(-1)?.data).toMatchObject({ arguments: { key: "[redacted:token]" } });
    for (const path of [`?sessionId=${id}`, "/req-with-secret"]) {
      const seen = await hitl("GET", path, undefined, t.tokens.observer);
      expect(seen.status).toBe(200);
      expect(JSON.stringify(seen.body)).not.toContain(secret);
      expect(JSON.stringify(seen.body)).toContain("[redacted:token]");
    }
    await client.interrupt(id);
    await collect(client, id, settled(turn));
  });

  it("lists and answers a permission request any harness raised (a bound tool under an ask policy)", async () => {
    const client = t.client();
    const { id } = await client.create({
      harness: "echo",
      config: { tools: ["echo"] },
      permissions: { tools: { echo: "ask" } },
    });
    const { turn } = await client.prompt(id, "echo: via nui");
    const asked = await collect(client, id, (e) => e.type === "permission.requested");
    const requestId = (asked.at(-1)!.data as { id: string }).id;
    const list = await hitl("GET", `?sessionId=${id}`);
    expect(list.body).toEqual([
      expect.objectContaining({
        requestId,
        kind: "approval",
        runId: turn,
        payload: expect.objectContaining({ toolName: "echo" }),
      }),
    ]);
    const denied = await hitl("POST", `/${requestId}/respond`, {
      status: "declined",
      answers: { message: "not now" },
    });
    expect(denied.body).toMatchObject({
      status: "declined",
      answers: { approved: false, message: "not now" },
    });
    const events = await collect(client, id, settled(turn));
    expect(events.find((e) => e.type === "permission.resolved")?.data).toEqual({
      id: requestId,
      decision: "deny",
      reason: "not now",
      answered_by: { tenant: "default", token: "admin" },
    });
    expect(events.find((e) => e.type === "tool.result")?.data).toMatchObject({ is_error: true });
  });

  it("refuses a request under an id that is pending (409); the first request keeps its wait and an interrupt settles the turn", async () => {
    const client = t.client();
    const { id } = await client.create({
      harness: "echo",
      config: { tools: ["echo"] },
      permissions: { tools: { echo: "ask" } },
    });
    const { turn } = await client.prompt(id, "echo: ping");
    const asked = await collect(client, id, (e) => e.type === "permission.requested");
    const requestId = (asked.at(-1)!.data as { id: string }).id;
    for (const kind of ["approval", "question"]) {
      const twin = await hitl("POST", "", { sessionId: id, requestId, kind, payload: { message: "hi" } });
      expect(twin.status, JSON.stringify(twin.body)).toBe(409);
      expect((twin.body.error as { message: string }).message).toContain(`"${requestId}" is already pending`);
    }
    // A multi-question request's further questions have ids of their own (`<id>#2`): taken as well.
    const multi = await hitl("POST", "", {
      sessionId: id,
      requestId: "multi",
      kind: "question",
      payload: { questions: ["one?", "two?"] },
    });
    expect(multi.status, JSON.stringify(multi.body)).toBe(201);
    expect((await hitl("POST", "", { sessionId: id, requestId: "multi#2", kind: "question" })).status).toBe(
      409,
    );
    const interrupted = await raw(t.url, "POST", `/v1/sessions/${id}/interrupt`, {
      token: t.tokens.admin,
      body: {},
    });
    expect(interrupted.status, JSON.stringify(interrupted.body)).toBeLessThan(300);
    const events = await collect(client, id, settled(turn));
    expect(events.at(-1)?.data).toMatchObject({ status: "interrupted" });
    expect(events.find((e) => e.type === "permission.resolved")?.data).toMatchObject({
      id: requestId,
      decision: "deny",
    });
    expect(events.find((e) => e.type === "tool.result")?.data).toMatchObject({ is_error: true });
    expect((await client.session(id)).pending).toEqual([]);
  });

  it("refuses what it cannot do: no running turn (409), unknown or foreign session (404), unknown id (404)", async () => {
    const client = t.client();
    const { id } = await client.create({ harness: "echo" });
    const idle = await hitl("POST", "", { kind: "question", sessionId: id, payload: { message: "hi?" } });
    expect(idle.status).toBe(409);
    expect((idle.body.error as { message: string }).message).toContain("no run is working");
    expect((await hitl("POST", "", { kind: "question", sessionId: "ghost" })).status).toBe(404);
    expect((await hitl("POST", "", { kind: "question", sessionId: id }, t.tokens.other)).status).toBe(404);
    expect((await hitl("GET", "/nope")).status).toBe(404);
    expect((await hitl("GET", "/nope/wait")).status).toBe(404);
    expect((await hitl("POST", "/nope/respond", {})).status).toBe(404);
    const badKind = await hitl("POST", "", { kind: "poll", sessionId: id });
    expect(badKind.status).toBe(400);
    expect(badKind.body.error).toMatchObject({ field: "kind" });
    const observer = await hitl("POST", "", { kind: "question", sessionId: id }, t.tokens.observer);
    expect(observer.status).toBe(403);
  });

  it("searches a log a page at a time for an answered or unknown id, never reading it whole", async () => {
    const client = t.client();
    const { id } = await client.create({
      harness: "echo",
      config: { tools: ["echo"] },
      permissions: { tools: { echo: "ask" } },
    });
    const words = Array.from({ length: 3000 }, (_, i) => `w${i}`).join(" ");
    await collect(client, id, settled((await client.prompt(id, words)).turn));
    // Answered past the first page of the log.
    const { turn } = await client.prompt(id, "echo: late");
    const asked = await collect(client, id, (e) => e.type === "permission.requested");
    const requestId = (asked.at(-1)!.data as { id: string }).id;
    await client.answer(id, requestId, { decision: "allow" });
    await collect(client, id, settled(turn));
    const log = (await t.brain.session(id)).log;
    expect(log.lastSeq).toBeGreaterThan(3000);
    const read = log.read.bind(log);
    let most = 0;
    log.read = async (after, limit) => {
      const events = await read(after, limit);
      most = Math.max(most, events.length);
      return events;
    };
    expect((await hitl("GET", "/nope/wait", undefined, t.tokens.observer)).status).toBe(404);
    expect((await hitl("POST", "/nope/respond", {})).status).toBe(404);
    expect((await hitl("GET", `/${requestId}/wait`)).body).toMatchObject({ requestId, status: "answered" });
    expect((await hitl("POST", `/${requestId}/respond`, {})).status).toBe(409);
    expect(most).toBeGreaterThan(0);
    expect(most).toBeLessThanOrEqual(1000);
  });

  it("looks back over each session's last 1000 events only, for an id pending nowhere", async () => {
    const client = t.client();
    const { id } = await client.create({
      harness: "echo",
      config: { tools: ["echo"] },
      permissions: { tools: { echo: "ask" } },
    });
    const { turn } = await client.prompt(id, "echo: early");
    const asked = await collect(client, id, (e) => e.type === "permission.requested");
    const requestId = (asked.at(-1)!.data as { id: string }).id;
    await client.answer(id, requestId, { decision: "allow" });
    await collect(client, id, settled(turn));
    const words = Array.from({ length: 3000 }, (_, i) => `w${i}`).join(" ");
    await collect(client, id, settled((await client.prompt(id, words)).turn));
    const log = (await t.brain.session(id)).log;
    const read = log.read.bind(log);
    let total = 0;
    log.read = async (after, limit) => {
      const events = await read(after, limit);
      total += events.length;
      return events;
    };
    // Answered over 3000 events ago: as unknown as an id never asked, and found without reading the log whole.
    const waited = await hitl("GET", `/${requestId}/wait`);
    expect(waited.status).toBe(404);
    expect(JSON.stringify(waited.body)).toContain("nor answered in their last 1000 events");
    expect((await hitl("POST", `/${requestId}/respond`, {})).status).toBe(404);
    expect(total).toBeGreaterThan(0);
    expect(total).toBeLessThanOrEqual(2000);
  });

  it("takes a ttl of up to a year, its envelope saying the session's shorter ask timeout; a longer one gets 400 naming ttlSeconds, and asks nothing", async () => {
    const { client, id, turn } = await running();
    for (const ttlSeconds of [MAX_HITL_TTL_SECONDS + 1, 1e13, 9e15]) {
      const res = await hitl("POST", "", { kind: "question", sessionId: id, ttlSeconds });
      expect(res.status, String(ttlSeconds)).toBe(400);
      expect(res.body.error).toMatchObject({ code: "bad_request", field: "ttlSeconds" });
      expect((res.body.error as { message: string }).message).toContain(String(MAX_HITL_TTL_SECONDS));
    }
    expect((await hitl("GET", `?sessionId=${id}`)).body).toEqual([]);
    const year = await hitl("POST", "", {
      kind: "question",
      sessionId: id,
      ttlSeconds: MAX_HITL_TTL_SECONDS,
      payload: { message: "in a year?" },
    });
    expect(year.status, JSON.stringify(year.body)).toBe(201);
    const { createdAt, expiresAt, ttlSeconds } = year.body as {
      createdAt: string;
      expiresAt: string;
      ttlSeconds: number;
    };
    // Waited no longer than the session's ask timeout: the envelope promises what Brain keeps.
    expect(ttlSeconds).toBe(DEFAULT_ASK_TIMEOUT_MS / 1000);
    expect(Date.parse(expiresAt) - Date.parse(createdAt)).toBe(DEFAULT_ASK_TIMEOUT_MS);
    await client.interrupt(id);
    await collect(client, id, settled(turn));
  });

  it("works with nui's unchanged Python client, NUI_API_URL carrying the token in the path", async () => {
    const { client, id, turn } = await running();
    const script = [
      "import json, nui_hitl",
      "print(json.dumps(nui_hitl.request_approval(title='Deploy', message='Ship?', tool_name='deploy', tool_input={'env': 'prod'})))",
    ].join("\n");
    const python = spawn("python3", ["-c", script], {
      cwd: join(import.meta.dirname, "../../sdk/python"),
      env: {
        ...process.env,
        NUI_API_URL: `${t.url}/nui/${t.tokens.admin}`,
        NUI_SESSION_ID: id,
        NUI_RUN_ID: turn,
      },
    });
    let out = "";
    let err = "";
    python.stdout.on("data", (chunk: Buffer) => {
      out += chunk;
    });
    python.stderr.on("data", (chunk: Buffer) => {
      err += chunk;
    });
    const exited = new Promise<number | null>((resolve) => python.once("exit", resolve));
    const asked = await collect(client, id, (e) => e.type === "permission.requested");
    const requestId = (asked.at(-1)!.data as { id: string }).id;
    await client.answer(id, requestId, { decision: "allow", reason: "go" });
    expect(await exited, err).toBe(0);
    expect(JSON.parse(out)).toMatchObject({ requestId, status: "answered", answers: { approved: true } });
    await client.interrupt(id);
    await collect(client, id, settled(turn));
  });
});
