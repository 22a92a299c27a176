// The loopback REST API behind NUI_API_URL, on its own: routing by session and run, nui's envelopes, and a
// clear answer to every request it cannot serve.
import { request } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import type { HarnessOptions } from "../../core/harness.js";
import { NuiApiServer } from "./api-server.js";
import { HitlDesk, type HitlRun, MAX_ANSWERED_HITL, MAX_UNANSWERED_HITL } from "./hitl-desk.js";

const servers: NuiApiServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.stop();
});

/** A desk whose ask/permit answer from a script, and whose run is `run` (or none). */
function desk(
  sessionId: string,
  run: HitlRun | undefined,
  answers: string[] = [],
  verdict: "allow" | "deny" = "allow",
  gate: Promise<void> = Promise.resolve(),
) {
  const asked: unknown[] = [];
  const options = {
    ask: async (_turn: string, question: unknown, _signal: AbortSignal, opts?: { id?: string }) => {
      asked.push({ question, id: opts?.id });
      await gate; // a person takes their time
      return answers.shift() ?? "";
    },
    permit: async (_turn: string, use: unknown, _signal: AbortSignal, opts?: { id?: string }) => {
      asked.push({ use, id: opts?.id });
      return { decision: verdict };
    },
  } as Pick<HarnessOptions, "ask" | "permit">;
  return { desk: new HitlDesk(sessionId, options, () => run), asked };
}

const running = (runId = "run-1"): HitlRun => ({ runId, turn: "t1", signal: new AbortController().signal });

async function serve(...desks: HitlDesk[]) {
  const server = new NuiApiServer();
  servers.push(server);
  const { url } = await server.retain();
  for (const d of desks) server.addDesk(d);
  return { url, call: caller(url) };
}

/** Calls under a NUI_API_URL. node:http, not fetch: fetch drops a Host header of the caller's. */
function caller(url: string) {
  return (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    new Promise<{ status: number; body: Record<string, unknown> & { error?: string } }>((resolve, reject) => {
      const req = request(`${url}${path}`, { method, headers }, (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          text += chunk;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
      });
      req.on("error", reject);
      req.end(body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body));
    });
}

describe("nui's HITL REST API", () => {
  it("asks each question of a request and answers with nui's response envelope", async () => {
    let answer = () => {};
    const d = desk(
      "s1",
      running(),
      ["red", "large"],
      "allow",
      new Promise<void>((resolve) => {
        answer = resolve;
      }),
    );
    const { call } = await serve(d.desk);
    const created = await call("POST", "/api/hitl/requests", {
      sessionId: "s1",
      runId: "run-1",
      kind: "question",
      payload: {
        questions: [
          { question: "Colour?", options: ["red", { label: "blue" }] },
          { header: "Size", question: "Size?" },
        ],
      },
    });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({
      schemaVersion: "1",
      sessionId: "s1",
      runId: "run-1",
      kind: "question",
      status: "delivered",
    });
    const id = created.body.requestId as string;
    const pending = await call("GET", "/api/hitl/requests?pending=true&sessionId=s1");
    expect(pending.body).toEqual([expect.objectContaining({ requestId: id })]);
    answer();
    const waited = await call("GET", `/api/hitl/requests/${id}/wait`);
    expect(waited.body).toMatchObject({
      requestId: id,
      status: "answered",
      answers: { "Colour?": "red", "Size?": "large" },
      respondedBy: { channel: "brain" },
    });
    expect(d.asked).toEqual([
      { question: { question: "Colour?", options: ["red", "blue"] }, id },
      { question: { question: "Size?", header: "Size" }, id: `${id}#2` }, // nui's header is kept
    ]);
    expect((await call("GET", "/api/hitl/requests?pending=true")).body).toEqual([]);
  });

  it("an unanswered question expires; an approval maps the verdict", async () => {
    const q = desk("s1", running(), []);
    const a = desk("s2", running("run-2"), [], "deny");
    const { call } = await serve(q.desk, a.desk);
    const question = await call("POST", "/api/hitl/requests", {
      sessionId: "s1",
      payload: { message: "anyone?" },
    });
    expect((await call("GET", `/api/hitl/requests/${question.body.requestId}/wait`)).body).toMatchObject({
      status: "expired",
    });
    // no sessionId: found by its run
    const approval = await call("POST", "/api/hitl/requests", {
      runId: "run-2",
      kind: "approval",
      payload: { toolName: "rm", toolInput: { path: "/" } },
    });
    expect(approval.status).toBe(200);
    expect((await call("GET", `/api/hitl/requests/${approval.body.requestId}/wait`)).body).toMatchObject({
      status: "declined",
      answers: { approved: false, decision: "deny" },
    });
    expect(a.asked).toEqual([{ use: { tool: "rm", arguments: { path: "/" } }, id: approval.body.requestId }]);
  });

  it("refuses what it cannot serve, saying why", async () => {
    const idle = desk("idle", undefined);
    const busy = desk("busy", running());
    const { call } = await serve(idle.desk, busy.desk);
    expect(await call("POST", "/api/hitl/requests", "not json")).toMatchObject({
      status: 400,
      body: { error: expect.stringMatching(/not JSON/) },
    });
    expect((await call("POST", "/api/hitl/requests", { kind: "poll" })).body.error).toMatch(
      /bad HITL request: kind: /,
    );
    expect(await call("POST", "/api/hitl/requests", { sessionId: "nobody" })).toMatchObject({
      status: 404,
      body: { error: expect.stringMatching(/no session "nobody" runs a nui agent here/) },
    });
    expect((await call("POST", "/api/hitl/requests", {})).body.error).toMatch(
      /names neither a sessionId nor a running runId/,
    );
    expect(await call("POST", "/api/hitl/requests", { sessionId: "idle" })).toMatchObject({
      status: 409,
      body: { error: expect.stringMatching(/no run is working in session idle/) },
    });
    expect((await call("GET", "/api/hitl/requests/nope/wait")).status).toBe(404);
    expect(await call("GET", "/api/hitl/requests/%E0%A4%A/wait")).toMatchObject({
      status: 400,
      body: { error: expect.stringMatching(/malformed %-escape: percent-encode it as UTF-8/) },
    });
    // Deeper than JSON.stringify manages: it could be asked but not logged, and would fail the turn.
    const nested = `${"[".repeat(200_000)}${"]".repeat(200_000)}`;
    const deep = `{"sessionId":"busy","kind":"approval","payload":{"toolInput":{"a":${nested}}}}`;
    expect(await call("POST", "/api/hitl/requests", deep)).toMatchObject({
      status: 400,
      body: { error: expect.stringMatching(/nests too deep to be written as JSON/) },
    });
    expect(busy.asked).toEqual([]);
    const made = await call("POST", "/api/hitl/requests", { sessionId: "busy", requestId: "mine" });
    expect(made.body.requestId).toBe("mine");
    expect(await call("POST", "/api/hitl/requests/mine/respond", { status: "answered" })).toMatchObject({
      status: 409,
      body: { error: expect.stringMatching(/answer it through Brain/) },
    });
    expect((await call("GET", "/api/other")).body.error).toMatch(/only nui's HITL API/);
  });

  it("refuses a body over 1 MiB as too large (413, saying so), with or without a Content-Length", async () => {
    const { call } = await serve(desk("busy", running()).desk);
    const body = { kind: "question", payload: { text: "x".repeat(1 << 20) } };
    const tooLarge = { status: 413, body: { error: expect.stringMatching(/over 1 MiB.*smaller payload/) } };
    expect(await call("POST", "/api/hitl/requests", body)).toMatchObject(tooLarge);
    const chunked = { "transfer-encoding": "chunked" };
    expect(await call("POST", "/api/hitl/requests", body, chunked)).toMatchObject(tooLarge);
  });

  it("holds a bounded number of requests: more unanswered ones are refused, the oldest answered let go", async () => {
    // nui's SDKs wait for each answer; an agent that does not would have Brain hold every request without end.
    let answer = () => {};
    const gate = new Promise<void>((resolve) => {
      answer = resolve;
    });
    const d = desk("s1", running(), [], "allow", gate);
    const { call } = await serve(d.desk);
    const made: string[] = [];
    for (let i = 0; i < MAX_UNANSWERED_HITL; i++) {
      const created = await call("POST", "/api/hitl/requests", {
        sessionId: "s1",
        payload: { question: `q${i}` },
      });
      expect(created.status).toBe(200);
      made.push(String(created.body.requestId));
    }
    expect(await call("POST", "/api/hitl/requests", { sessionId: "s1" })).toMatchObject({
      status: 429,
      body: { error: expect.stringMatching(/has 64 HITL requests waiting for an answer; wait for one/) },
    });
    answer();
    await call("GET", `/api/hitl/requests/${made.at(-1)}/wait`);
    // Answered, each makes room; past MAX_ANSWERED_HITL answered ones, the oldest are no longer found.
    const more = MAX_ANSWERED_HITL - MAX_UNANSWERED_HITL + 1;
    for (let i = 0; i < more; i++) {
      const created = await call("POST", "/api/hitl/requests", {
        sessionId: "s1",
        payload: { question: "again" },
      });
      expect(created.status).toBe(200);
      await call("GET", `/api/hitl/requests/${created.body.requestId}/wait`);
    }
    expect((await call("GET", `/api/hitl/requests/${made[0]}`)).status).toBe(404);
    expect((await call("GET", `/api/hitl/requests/${made[1]}`)).status).toBe(200);
  });

  it("serves only under NUI_API_URL's secret segment, and never a web page or a rebound Host name", async () => {
    const d = desk("s1", running());
    const { url, call } = await serve(d.desk);
    const { origin, pathname } = new URL(url);
    expect(pathname).toMatch(/^\/[\w-]{32}$/);
    const approval = { kind: "approval", payload: { toolName: "update", toolInput: {} } };
    for (const path of ["/api/hitl/requests", `${pathname}x/api/hitl/requests`, "/wrong/api/hitl/requests"]) {
      const res = await fetch(`${origin}${path}`, { method: "POST", body: JSON.stringify(approval) });
      expect([path, res.status, await res.json()]).toEqual([path, 404, { error: "not found" }]);
    }
    // What a page can send without a preflight (text/plain), and what reaches us under a DNS-rebound name.
    const page = await call("POST", "/api/hitl/requests", JSON.stringify(approval), {
      "content-type": "text/plain",
      origin: "https://evil.example",
    });
    expect(page).toMatchObject({ status: 403, body: { error: expect.stringMatching(/Origin header/) } });
    const rebound = await call("GET", "/api/hitl/requests?pending=true", undefined, {
      host: "evil.example:80",
    });
    expect(rebound).toMatchObject({ status: 403, body: { error: expect.stringMatching(/Host must name/) } });
    expect(d.asked).toEqual([]);
    // The host itself, by any loopback name.
    for (const host of [new URL(url).host, "localhost:1", "[::1]:2"]) {
      expect((await call("GET", "/api/hitl/requests?pending=true", undefined, { host })).status).toBe(200);
    }
    expect((await call("POST", "/api/hitl/requests", approval)).status).toBe(200);
    expect(d.asked).toHaveLength(1);
  });

  it("gives each holder its own token: a session's host reaches only its session, a shared host refuses a taken id", async () => {
    const server = new NuiApiServer();
    servers.push(server);
    const a = desk("A", running("run-A"));
    const b = desk("B", running("run-B"), [], "deny");
    server.addDesk(a.desk, "ext:x/h");
    server.addDesk(b.desk, "ext:x/h");
    const hostA = caller((await server.retain({ sessionId: "A" })).url);
    const hostB = caller((await server.retain({ sessionId: "B" })).url);
    const approval = (toolName: string) => ({ kind: "approval", requestId: "deploy", payload: { toolName } });

    // Both hosts choose the same id; each wait answers its own session's request.
    expect((await hostA("POST", "/api/hitl/requests", approval("deploy"))).body.sessionId).toBe("A");
    expect((await hostA("GET", "/api/hitl/requests/deploy/wait")).body.answers).toMatchObject({
      approved: true,
    });
    expect((await hostB("POST", "/api/hitl/requests", approval("rm -rf prod"))).body.sessionId).toBe("B");
    expect((await hostB("GET", "/api/hitl/requests/deploy/wait")).body.answers).toMatchObject({
      approved: false,
    });

    // A session's host neither names nor lists another session's requests.
    expect(await hostB("POST", "/api/hitl/requests", { ...approval("x"), sessionId: "A" })).toMatchObject({
      status: 404,
      body: { error: expect.stringMatching(/no session "A" runs a nui agent here/) },
    });
    const pendingA = await hostA("POST", "/api/hitl/requests", { kind: "question", requestId: "q-a" });
    expect(pendingA.status).toBe(200);
    expect((await hostB("GET", "/api/hitl/requests/q-a")).status).toBe(404);
    expect((await hostB("GET", "/api/hitl/requests?pending=true")).body).toEqual([]);
    expect((await hostA("GET", "/api/hitl/requests/q-a")).body.requestId).toBe("q-a");

    // A host shared by both sessions reaches both, and may not reuse an id one of them already has.
    const shared = caller((await server.retain({ harness: "ext:x/h" })).url);
    expect(
      await shared("POST", "/api/hitl/requests", { ...approval("y"), runId: "run-A", requestId: "new" }),
    ).toMatchObject({ status: 200 });
    expect(
      await shared("POST", "/api/hitl/requests", { ...approval("z"), runId: "run-B", requestId: "new" }),
    ).toMatchObject({
      status: 409,
      body: { error: expect.stringMatching(/"new" is taken by another session's request/) },
    });
    expect(b.asked).toHaveLength(1);
  });

  it("answers a request raised over the protocol under an id already asked and answered, saying why", async () => {
    const d = desk("A", running(), ["yes"]);
    const delivered: { status: string; answers?: Record<string, unknown> }[] = [];
    const raise = () =>
      d.desk.fromEvent({ requestId: "hitl-1", kind: "question", payload: {} }, running(), (response) => {
        delivered.push(response);
      });
    raise();
    raise(); // the same request again while it waits: a notice, no second question
    await expect.poll(() => delivered.length).toBe(1);
    expect(delivered[0]).toMatchObject({ status: "answered", answers: { answer: "yes" } });
    raise(); // a host whose counter started again after a restart
    await expect.poll(() => delivered.length).toBe(2);
    expect(delivered[1]).toMatchObject({
      status: "cancelled",
      answers: { reason: expect.stringMatching(/"hitl-1" was asked and answered already/) },
    });
    expect(d.asked).toHaveLength(1);
  });

  it("a host shared by one harness's sessions reaches none of another harness's", async () => {
    const server = new NuiApiServer();
    servers.push(server);
    const other = desk("C", running("run-C"));
    server.addDesk(other.desk, "ext:y/h");
    await caller((await server.retain({ sessionId: "C" })).url)("POST", "/api/hitl/requests", {
      kind: "question",
      requestId: "q-c",
    });
    const shared = caller((await server.retain({ harness: "ext:x/h" })).url);
    expect((await shared("GET", "/api/hitl/requests?pending=true")).body).toEqual([]);
    expect((await shared("GET", "/api/hitl/requests/q-c")).status).toBe(404);
    expect((await shared("GET", "/api/hitl/requests/q-c/wait")).status).toBe(404);
    expect(
      await shared("POST", "/api/hitl/requests", { kind: "approval", sessionId: "C", runId: "run-C" }),
    ).toMatchObject({ status: 404 });
    expect(other.asked).toHaveLength(1);
  });

  it("a host shared by a harness's sessions asks only for a run it names, never in the one session open", async () => {
    const server = new NuiApiServer();
    servers.push(server);
    const only = desk("D", running("run-D"));
    server.addDesk(only.desk, "ext:x/h");
    const shared = caller((await server.retain({ harness: "ext:x/h" })).url);
    expect(await shared("POST", "/api/hitl/requests", { kind: "question" })).toMatchObject({
      status: 404,
      body: { error: expect.stringMatching(/names neither a sessionId nor a runId and this host is shared/) },
    });
    expect(await shared("POST", "/api/hitl/requests", { kind: "question", runId: "run-gone" })).toMatchObject(
      {
        status: 404,
        body: {
          error: expect.stringMatching(/names run "run-gone", which is not running, and this host is shared/),
        },
      },
    );
    expect(only.asked).toEqual([]);
    expect(await shared("POST", "/api/hitl/requests", { kind: "question", runId: "run-D" })).toMatchObject({
      status: 200,
    });
    // The session's own host (NUI_RUN_ID, NUI_SESSION_ID) still has its one session found without naming it.
    const own = caller((await server.retain({ sessionId: "D" })).url);
    expect((await own("POST", "/api/hitl/requests", { kind: "question" })).status).toBe(200);
    expect(only.asked).toHaveLength(2);
  });
});
