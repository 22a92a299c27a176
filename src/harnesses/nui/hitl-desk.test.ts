// The HITL desk's bounds on what one request may ask: every new request's Brain ids are checked against each
// unanswered request's, so a request listing a body's worth of questions held the daemon's event loop for
// minutes (each of its ids against each of theirs, every one rebuilt from its payload).
import { describe, expect, it } from "vitest";
import type { HitlResponseEnvelope } from "../../protocol/nui/hitl.js";
import { HitlDesk, HitlRefusal, MAX_HITL_QUESTIONS } from "./hitl-desk.js";

const run = { runId: "r1", turn: "t1", signal: new AbortController().signal };

/** A desk whose questions nobody answers: every request it asks stays unanswered. */
function unansweredDesk() {
  const never = new Promise<never>(() => {});
  return new HitlDesk("s1", { ask: () => never, permit: () => never, asking: () => false }, () => run);
}

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
});
