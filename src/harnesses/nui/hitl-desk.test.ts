// The HITL desk's bounds on what one request may ask: every new request's Brain ids are checked against each
// unanswered request's, so a request listing a body's worth of questions held the daemon's event loop for
// minutes (each of its ids against each of theirs, every one rebuilt from its payload).
import { describe, expect, it } from "vitest";
import { PendingRequests } from "../../core/pending.js";
import { PermissionRules } from "../../core/permissions.js";
import { RequestDesk } from "../../core/request-desk.js";
import type { NewEvent, SessionEvent } from "../../protocol/events.js";
import type { HitlResponseEnvelope } from "../../protocol/nui/hitl.js";
import { HitlDesk, HitlRefusal, MAX_HITL_QUESTIONS } from "./hitl-desk.js";

const run = { runId: "r1", turn: "t1", signal: new AbortController().signal };

/** A desk whose questions nobody answers: every request it asks stays unanswered. */
function unansweredDesk() {
  const never = new Promise<never>(() => {});
  return new HitlDesk("s1", { ask: () => never, permit: () => never, asking: () => false }, () => run);
}

/** A desk asking through a session's real request desk, over an in-memory log, with this ask timeout. */
function sessionDesk(askTimeoutMs: number) {
  const pending = new PendingRequests();
  const log: NewEvent[] = [];
  const append = async (events: NewEvent[]) => {
    for (const event of events) {
      log.push(event);
      pending.observe(event);
    }
    return events as SessionEvent[];
  };
  const requests = new RequestDesk({
    pending,
    permissions: new PermissionRules({ default: "ask", ask_timeout_ms: askTimeoutMs }),
    append,
  });
  const desk = new HitlDesk(
    "s1",
    {
      ask: (turn, question, signal, options) => requests.ask(turn, question, signal, options),
      permit: (turn, use, signal, options) => requests.permit(turn, use, signal, options),
      asking: (id) => requests.asking(id),
      askTimeoutMs: requests.askTimeoutMs,
    },
    () => run,
  );
  return { desk, log };
}

const lasts = (envelope: { createdAt: string; expiresAt: string }) =>
  (Date.parse(envelope.expiresAt) - Date.parse(envelope.createdAt)) / 1000;

const questions = (n: number, prefix = "q") => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

describe("HitlDesk", () => {
  it(`refuses a request that lists more than ${MAX_HITL_QUESTIONS} questions, naming payload.questions, over the API and over the protocol`, () => {
    const desk = unansweredDesk();
    let refusal: unknown;
    try {
      desk.create({
        requestId: "many",
        kind: "question",
        payload: { questions: questions(MAX_HITL_QUESTIONS + 1) },
      });
    } catch (err) {
      refusal = err;
    }
    expect(refusal).toBeInstanceOf(HitlRefusal);
    expect(refusal).toMatchObject({ status: 400 });
    expect((refusal as Error).message).toMatch(
      /payload\.questions lists 65 questions; .* at most 64: split them/,
    );
    expect(desk.has("many")).toBe(false);

    const delivered: HitlResponseEnvelope[] = [];
    desk.fromEvent(
      { requestId: "many-2", kind: "freeform", payload: { questions: questions(200_000) } },
      run,
      (response) => delivered.push(response),
    );
    expect(delivered).toEqual([
      expect.objectContaining({
        requestId: "many-2",
        status: "cancelled",
        answers: { reason: expect.stringMatching(/at most 64/) },
      }),
    ]);
    expect(desk.has("many-2")).toBe(false);
  });

  it("takes requests up to the bound, and still refuses one whose question ids an unanswered request will ask", () => {
    const desk = unansweredDesk();
    desk.create({ requestId: "a", kind: "question", payload: { questions: questions(MAX_HITL_QUESTIONS) } });
    // An approval lists no questions it asks: its payload is not counted.
    desk.create({
      requestId: "ok",
      kind: "approval",
      payload: { questions: questions(MAX_HITL_QUESTIONS + 1) },
    });
    expect(desk.pending().map((r) => r.requestId)).toEqual(["a", "ok"]);
    // "a#64" is the 64th question of "a", which nobody has answered yet.
    expect(() => desk.create({ requestId: "a#64", kind: "question", payload: {} })).toThrow(
      /id "a#64" is already pending in session s1; choose another requestId/,
    );
    expect(() =>
      desk.create({ requestId: "b", kind: "question", payload: { questions: questions(3) } }),
    ).not.toThrow();
  });

  it("expires a request at the expiresAt its envelope promises: its ttl, or the session's shorter ask timeout", async () => {
    const { desk, log } = sessionDesk(60_000);
    const long = desk.create({ requestId: "long", kind: "question", payload: { message: "which?" } });
    const approval = desk.create({ requestId: "ok?", kind: "approval", payload: { toolName: "rm" } });
    const short = desk.create({ requestId: "short", kind: "question", payload: {}, ttlSeconds: 1 });
    // nui's default hour is cut to the session's minute, and the envelope says so.
    expect([long.ttlSeconds, lasts(long), approval.ttlSeconds, lasts(approval)]).toEqual([60, 60, 60, 60]);
    expect([short.ttlSeconds, lasts(short)]).toEqual([1, 1]);
    // The 1 s request is not left waiting the session's minute.
    expect(await desk.wait("short")).toMatchObject({ requestId: "short", status: "expired" });
    expect(log.find((e) => e.type === "question.answered")?.data).toMatchObject({
      id: "short",
      answer: "",
      reason: "no client answered within 1 s",
    });
    expect(desk.pending().map((r) => r.requestId)).toEqual(["long", "ok?"]);
  });

  it("says an ask timeout of less than a second exactly in expiresAt, and rounds ttlSeconds up", async () => {
    const { desk, log } = sessionDesk(300);
    const request = desk.create({ requestId: "q", kind: "question", payload: {} });
    expect([request.ttlSeconds, lasts(request)]).toEqual([1, 0.3]);
    expect(await desk.wait("q")).toMatchObject({ status: "expired" });
    expect(log.find((e) => e.type === "question.answered")?.data).toMatchObject({
      reason: "no client answered within 0.3 s",
    });
  });
});
