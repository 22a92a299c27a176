// The loopback REST API behind NUI_API_URL, on its own: routing by session and run, nui's envelopes, and a
// clear answer to every request it cannot serve.
import { afterEach, describe, expect, it } from "vitest";
import type { HarnessOptions } from "../../core/harness.js";
import { NuiApiServer } from "./api-server.js";
import { HitlDesk, type HitlRun } from "./hitl-desk.js";

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
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${url}${path}`, {
      method,
      ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) }),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> & { error?: string } };
  };
  return { url, call };
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
    const { call } = await serve(idle.desk, desk("busy", running()).desk);
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
    const made = await call("POST", "/api/hitl/requests", { sessionId: "busy", requestId: "mine" });
    expect(made.body.requestId).toBe("mine");
    expect(await call("POST", "/api/hitl/requests/mine/respond", { status: "answered" })).toMatchObject({
      status: 409,
      body: { error: expect.stringMatching(/answer it through Brain/) },
    });
    expect((await call("GET", "/api/other")).body.error).toMatch(/only nui's HITL API/);
  });
});
