// A permission request no one answered in time is nui's `expired`, not `declined`: in the log and in the HITL API's
// response envelope, so a client tells "no one answered" from "the person said no".
import { expect, it } from "vitest";
import { scripted } from "../testing/brain.js";
import { startTestDaemon } from "../testing/daemon.js";
import { collect, raw, settled } from "../testing/http.js";
import { responseEnvelopeOf } from "./hitl/envelopes.js";

it("a permission request that times out reads expired, whoever asked it", async () => {
  // The harness asks Brain itself (as a CLI agent's permit), then makes a nui approval through the HITL API.
  const t = await startTestDaemon({
    factories: [
      scripted(async (options, turn) => {
        const signal = new AbortController().signal;
        await options.permit(turn, { tool: "deploy" }, signal, { id: "native", unlisted: "ask" });
        const made = await raw(t.url, "POST", "/api/hitl/requests", {
          token: t.tokens.admin,
          body: { kind: "approval", runId: turn, requestId: "nui", payload: { toolName: "deploy" } },
        });
        if (made.status !== 201) throw new Error(JSON.stringify(made.body));
        await raw(t.url, "GET", "/api/hitl/requests/nui/wait", { token: t.tokens.admin });
      }),
    ],
  });
  try {
    const client = t.client();
    const { id } = await client.create({ harness: "scripted", permissions: { ask_timeout_ms: 50 } });
    const { turn } = await client.prompt(id, "go");
    await collect(client, id, settled(turn));
    const resolved = (await client.log(id)).events.filter((e) => e.type === "permission.resolved");
    expect(resolved.map((e) => e.data)).toEqual([
      { id: "native", decision: "deny", reason: "no client answered within 0.05 s", unanswered: "expired" },
      { id: "nui", decision: "deny", reason: "no client answered within 0.05 s", unanswered: "expired" },
    ]);
    for (const request of ["native", "nui"]) {
      const waited = await raw(t.url, "GET", `/api/hitl/requests/${request}/wait`, { token: t.tokens.admin });
      expect(waited.body, request).toMatchObject({ requestId: request, status: "expired" });
    }
  } finally {
    await t.cleanup();
  }
});

it("lists a harness's own permission request and question with the deadline the session's ask timeout gives them", async () => {
  const t = await startTestDaemon({
    factories: [
      scripted(async (options, turn) => {
        const signal = new AbortController().signal;
        await Promise.all([
          options.permit(turn, { tool: "deploy" }, signal, { id: "perm", unlisted: "ask" }),
          options.ask(turn, { question: "Which?" }, signal, { id: "question" }),
        ]);
      }),
    ],
  });
  try {
    const client = t.client();
    const { id } = await client.create({ harness: "scripted", permissions: { ask_timeout_ms: 30_000 } });
    // Before anything is asked: the desk fixes each request's deadline after this, from its own clock (this one).
    const prompted = Date.now();
    const { turn } = await client.prompt(id, "go");
    let asked = 0;
    const seen = await collect(client, id, (e) => e.type.endsWith(".requested") && ++asked === 2);
    const listed = await raw(t.url, "GET", `/api/hitl/requests?pending=true&sessionId=${id}`, {
      token: t.tokens.admin,
    });
    const envelopes = listed.body as unknown as {
      requestId: string;
      createdAt: string;
      expiresAt: string;
      ttlSeconds: number;
    }[];
    expect(envelopes.map((e) => e.requestId).sort()).toEqual(["perm", "question"]);
    for (const envelope of envelopes) {
      const logged = seen.find((e) => (e.data as { id?: string }).id === envelope.requestId)!;
      // Asked when logged. Its deadline is fixed when the desk asks, before the write that logs it (the log holds
      // it): the ask timeout from then, so no sooner than that after the prompt, and no later than that after the
      // logged time, which trails the ask by the write's wait (more on a loaded machine: not 30 s to the ms).
      expect(envelope.createdAt, envelope.requestId).toBe(logged.ts);
      expect(Date.parse(envelope.expiresAt), envelope.requestId).toBeGreaterThanOrEqual(prompted + 30_000);
      const lasts = Date.parse(envelope.expiresAt) - Date.parse(envelope.createdAt);
      expect(lasts, envelope.requestId).toBeLessThanOrEqual(30_000);
      expect(envelope.ttlSeconds, envelope.requestId).toBe(Math.ceil(lasts / 1000));
      const one = await raw(t.url, "GET", `/api/hitl/requests/${envelope.requestId}`, {
        token: t.tokens.admin,
      });
      expect(one.body).toMatchObject({ expiresAt: envelope.expiresAt });
    }
    for (const request of ["perm", "question"])
      await raw(t.url, "POST", `/api/hitl/requests/${request}/respond`, {
        token: t.tokens.admin,
        body: { status: "declined" },
      });
    await collect(client, id, settled(turn));
  } finally {
    await t.cleanup();
  }
});

it("a permission request and a question its turn's interrupt ended read cancelled", async () => {
  const t = await startTestDaemon({
    factories: [
      scripted(async (_options, turn) => {
        const made = (requestId: string, kind: string) =>
          raw(t.url, "POST", "/api/hitl/requests", {
            token: t.tokens.admin,
            body: { kind, runId: turn, requestId, payload: { toolName: "deploy", message: "Which?" } },
          });
        await Promise.all([made("perm", "approval"), made("question", "question")]);
        await Promise.all(
          ["perm", "question"].map((id) =>
            raw(t.url, "GET", `/api/hitl/requests/${id}/wait`, { token: t.tokens.admin }),
          ),
        );
      }),
    ],
  });
  try {
    const client = t.client();
    const { id } = await client.create({ harness: "scripted" });
    const { turn } = await client.prompt(id, "go");
    let asked = 0;
    await collect(client, id, (e) => e.type.endsWith(".requested") && ++asked === 2);
    await client.interrupt(id);
    await collect(client, id, settled(turn));
    const answers = (await client.log(id)).events.filter(
      (e) => e.type.endsWith(".resolved") || e.type === "question.answered",
    );
    expect(answers.map((e) => (e.data as { unanswered?: string }).unanswered)).toEqual([
      "cancelled",
      "cancelled",
    ]);
    // As the desk that asked says it, and as the log says it to a wait for a request no desk here holds.
    for (const request of ["perm", "question"]) {
      const waited = await raw(t.url, "GET", `/api/hitl/requests/${request}/wait`, { token: t.tokens.admin });
      expect(waited.body, request).toMatchObject({ requestId: request, status: "cancelled" });
    }
    expect(answers.map((e) => responseEnvelopeOf(e)?.status)).toEqual(["cancelled", "cancelled"]);
  } finally {
    await t.cleanup();
  }
});
