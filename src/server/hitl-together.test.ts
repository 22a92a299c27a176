// A request of several questions a harness raised itself (as the nui bridge asks them: RequestDesk's `together`),
// through nui's HITL API: listed once, answered whole or not at all, each answer under its own question, and its
// response carrying every question's answer.
import { expect, it } from "vitest";
import { scripted } from "../testing/brain.js";
import { startTestDaemon } from "../testing/daemon.js";
import { collect, raw, settled } from "../testing/http.js";
import { HITL_LOOKBACK_EVENTS } from "./hitl/service.js";

const TOGETHER = ["q", "q#2"];

/**
 * A daemon whose turn asks "Colour?" and "Size?" as one request "q", each waiting `waitMs` (by question id), then
 * logs `later` events while they wait.
 */
async function asking(waitMs: Record<string, number>, later = 0) {
  const t = await startTestDaemon({
    factories: [
      scripted(async (options, turn) => {
        const signal = new AbortController().signal;
        const asked = Promise.all(
          ["Colour?", "Size?"].map((question, i) => {
            const id = TOGETHER[i]!;
            return options.ask(turn, { question }, signal, { id, together: TOGETHER, waitMs: waitMs[id]! });
          }),
        );
        for (let i = 0; i < later; i++) options.emit({ type: "assistant.delta", turn, data: { text: "." } });
        await asked;
      }),
    ],
  });
  const client = t.client();
  const { id } = await client.create({ harness: "scripted" });
  const { turn } = await client.prompt(id, "go");
  let asked = 0;
  await collect(client, id, (e) => e.type === "question.requested" && ++asked === 2);
  const hitl = (method: string, path: string, body?: unknown) =>
    raw(t.url, method, `/api/hitl/requests${path}`, {
      token: t.tokens.admin,
      ...(body !== undefined ? { body } : {}),
    });
  return { t, client, id, turn, hitl };
}

it("lists the request once, refuses an answer that does not name a question, and answers with every answer", async () => {
  const { t, client, id, turn, hitl } = await asking({ q: 60_000, "q#2": 60_000 });
  try {
    const listed = (await hitl("GET", `?pending=true&sessionId=${id}`)).body as unknown as {
      requestId: string;
      payload: { questions: { question: string }[] };
    }[];
    expect(listed.map((e) => e.requestId)).toEqual(["q"]);
    expect(listed[0]!.payload.questions.map((q) => q.question)).toEqual(["Colour?", "Size?"]);
    const waiting = hitl("GET", "/q/wait");
    // "red" is the first string in answers: it was taken as the answer to "Size?" too.
    const unnamed = await hitl("POST", "/q/respond", { answers: { "Colour?": "red" } });
    expect(unnamed.status, JSON.stringify(unnamed.body)).toBe(400);
    expect(JSON.stringify(unnamed.body)).toContain('answers[\\"Size?\\"]');
    expect((await client.session(id)).pending?.map((p) => p.id)).toEqual(TOGETHER);
    const answers = { "Colour?": "red", "Size?": "large" };
    const responded = await hitl("POST", "/q/respond", { status: "answered", answers });
    expect(responded.body).toMatchObject({ requestId: "q", status: "answered", answers });
    expect((await waiting).body).toMatchObject({ requestId: "q", status: "answered", answers });
    await collect(client, id, settled(turn));
  } finally {
    await t.cleanup();
  }
});

it("answers none of a request's questions when one of them was given up, and says so", async () => {
  const { t, client, id, turn, hitl } = await asking({ q: 60_000, "q#2": 1 });
  try {
    await collect(client, id, (e) => e.type === "question.answered");
    const late = await hitl("POST", "/q/respond", { answers: { "Colour?": "red", "Size?": "large" } });
    expect(late.status, JSON.stringify(late.body)).toBe(409);
    expect(JSON.stringify(late.body)).toContain('"q#2\\" is no longer pending');
    // Not answered in part: the first question still waits, for an answer of its own or its timeout.
    expect((await client.session(id)).pending?.map((p) => p.id)).toEqual(["q"]);
    await client.answer(id, "q", { answer: "blue" });
    await collect(client, id, settled(turn));
    const answered = (await client.log(id)).events.filter((e) => e.type === "question.answered");
    expect(answered.map((e) => (e.data as { answer: string }).answer)).toEqual(["", "blue"]);
  } finally {
    await t.cleanup();
  }
});

it("answers a wait made after the request was answered with every question's answer, from the log", async () => {
  const { t, client, id, turn, hitl } = await asking({ q: 60_000, "q#2": 60_000 });
  try {
    const answers = { "Colour?": "red", "Size?": "large" };
    const responded = await hitl("POST", "/q/respond", { status: "answered", answers });
    expect(responded.body).toMatchObject({ requestId: "q", status: "answered", answers });
    await collect(client, id, settled(turn));
    // The grouping was the desk's, in memory, and gone once answered: a late wait had "Colour?"'s answer alone.
    const late = await hitl("GET", "/q/wait");
    expect(late.body).toMatchObject({ requestId: "q", status: "answered", answers });
    const asked = (await client.log(id)).events.filter((e) => e.type === "question.requested");
    expect(asked.map((e) => (e.data as { request?: string }).request)).toEqual(["q", "q"]);
  } finally {
    await t.cleanup();
  }
});

it("answers a late wait with every answer when the request was asked further back than the lookback", async () => {
  const { t, client, id, turn, hitl } = await asking({ q: 60_000, "q#2": 60_000 }, HITL_LOOKBACK_EVENTS + 10);
  try {
    await collect(client, id, (e) => e.type === "assistant.delta" && e.seq > HITL_LOOKBACK_EVENTS + 2);
    const answers = { "Colour?": "red", "Size?": "large" };
    expect((await hitl("POST", "/q/respond", { status: "answered", answers })).status).toBe(200);
    await collect(client, id, settled(turn));
    const events = [...(await client.log(id)).events, ...(await client.log(id, 1000)).events];
    const [asked, answered] = ["question.requested", "question.answered"].map((type) =>
      events.filter((e) => e.type === type).map((e) => e.seq),
    );
    // The answers are in the lookback, their questions well before it: the wait had "Colour?"'s answer alone.
    expect(answered![0]! - asked!.at(-1)!).toBeGreaterThan(HITL_LOOKBACK_EVENTS);
    const late = await hitl("GET", "/q/wait");
    expect(late.body).toMatchObject({ requestId: "q", status: "answered", answers });
  } finally {
    await t.cleanup();
  }
});

it("refuses another tenant's answer the same way through the session API and through nui's respond()", async () => {
  const { t, client, id, turn } = await asking({ q: 60_000, "q#2": 60_000 });
  try {
    const as = (token: string, path: string, body: unknown) => raw(t.url, "POST", path, { token, body });
    const answers = { "Colour?": "red", "Size?": "large" };
    const viaSession = await as(t.tokens.other, `/v1/sessions/${id}/requests/q`, { answer: "red" });
    const viaHitl = await as(t.tokens.other, "/api/hitl/requests/q/respond", { answers });
    expect([viaSession.status, viaHitl.status]).toEqual([404, 404]);
    expect((await client.session(id)).pending?.map((p) => p.id)).toEqual(TOGETHER);
    const responded = await as(t.tokens.admin, "/api/hitl/requests/q/respond", { answers });
    expect(responded.body).toMatchObject({ requestId: "q", status: "answered", answers });
    await collect(client, id, settled(turn));
  } finally {
    await t.cleanup();
  }
});
