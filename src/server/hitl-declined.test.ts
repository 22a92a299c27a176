// A person's `declined` answer to a question is nui's `declined`, not `expired`: in the log (question.answered
// says `declined`), in the HITL API's envelopes and in the answer the asking agent waits for. Before, it read as
// "no one answered in time".
import { expect, it } from "vitest";
import { scripted } from "../testing/brain.js";
import { startTestDaemon } from "../testing/daemon.js";
import { collect, raw, settled } from "../testing/http.js";
import { responseEnvelopeOf } from "./hitl/envelopes.js";

it("a question a person declines reads declined, for one question and for several", async () => {
  const heard: unknown[] = [];
  const t = await startTestDaemon({
    factories: [
      scripted(async (_options, turn) => {
        const made = (requestId: string, questions: string[]) =>
          raw(t.url, "POST", "/api/hitl/requests", {
            token: t.tokens.admin,
            body: { kind: "question", runId: turn, requestId, payload: { message: "Which?", questions } },
          });
        await Promise.all([made("one", ["Colour?"]), made("two", ["Size?", "Shape?"])]);
        const waits = await Promise.all(
          ["one", "two"].map((id) =>
            raw(t.url, "GET", `/api/hitl/requests/${id}/wait`, { token: t.tokens.admin }),
          ),
        );
        heard.push(...waits.map((w) => w.body));
      }),
    ],
  });
  try {
    const client = t.client();
    const { id } = await client.create({ harness: "scripted" });
    const { turn } = await client.prompt(id, "go");
    let asked = 0;
    await collect(client, id, (e) => e.type === "question.requested" && ++asked === 3);
    for (const request of ["one", "two"]) {
      const declined = await raw(t.url, "POST", `/api/hitl/requests/${request}/respond`, {
        token: t.tokens.admin,
        body: { status: "declined" },
      });
      expect(declined.body, request).toMatchObject({ requestId: request, status: "declined" });
    }
    await collect(client, id, settled(turn));
    const answers = (await client.log(id)).events.filter((e) => e.type === "question.answered");
    expect(answers.map((e) => e.data)).toEqual(
      ["one", "two", "two#2"].map((q) => ({
        id: q,
        answer: "",
        reason: "declined through the HITL API",
        declined: true,
        answered_by: expect.anything(),
      })),
    );
    expect(answers.map((e) => responseEnvelopeOf(e)?.status)).toEqual(["declined", "declined", "declined"]);
    // The agent that asked hears a person's no, as a wait made now does.
    expect(heard).toMatchObject([
      { requestId: "one", status: "declined" },
      { requestId: "two", status: "declined" },
    ]);
    for (const request of ["one", "two"]) {
      const waited = await raw(t.url, "GET", `/api/hitl/requests/${request}/wait`, { token: t.tokens.admin });
      expect(waited.body, request).toMatchObject({ requestId: request, status: "declined" });
    }
  } finally {
    await t.cleanup();
  }
});
