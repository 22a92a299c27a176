// A client's `cancelled` through nui's respond() is nui's `cancelled`: the log says `unanswered: "cancelled"`, and
// every reply, envelope and the asking agent's wait say so. Before, it was logged as an empty answer with a reason
// alone (a permission request as a plain deny), which read `expired` (`declined`) everywhere.
import { expect, it } from "vitest";
import { scripted } from "../testing/brain.js";
import { startTestDaemon } from "../testing/daemon.js";
import { collect, raw, settled } from "../testing/http.js";
import { responseEnvelopeOf } from "./hitl/envelopes.js";

it("a request a client cancels reads cancelled: an approval, one question and several", async () => {
  const heard: unknown[] = [];
  const t = await startTestDaemon({
    factories: [
      scripted(async (_options, turn) => {
        const made = (requestId: string, kind: string, questions: string[]) =>
          raw(t.url, "POST", "/api/hitl/requests", {
            token: t.tokens.admin,
            body: {
              kind,
              runId: turn,
              requestId,
              payload: { toolName: "deploy", message: "Which?", questions },
            },
          });
        await Promise.all([
          made("perm", "approval", []),
          made("one", "question", ["Colour?"]),
          made("two", "question", ["Size?", "Shape?"]),
        ]);
        const waits = await Promise.all(
          ["perm", "one", "two"].map((id) =>
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
    await collect(client, id, (e) => e.type.endsWith(".requested") && ++asked === 4);
    for (const request of ["perm", "one", "two"]) {
      const cancelled = await raw(t.url, "POST", `/api/hitl/requests/${request}/respond`, {
        token: t.tokens.admin,
        body: { status: "cancelled" },
      });
      expect(cancelled.body, request).toMatchObject({ requestId: request, status: "cancelled" });
    }
    await collect(client, id, settled(turn));
    const answers = (await client.log(id)).events.filter(
      (e) => e.type === "permission.resolved" || e.type === "question.answered",
    );
    expect(answers.map((e) => e.data)).toEqual([
      expect.objectContaining({ id: "perm", decision: "deny", unanswered: "cancelled" }),
      ...["one", "two", "two#2"].map((q) => ({
        id: q,
        answer: "",
        reason: "cancelled through the HITL API",
        unanswered: "cancelled",
        answered_by: expect.anything(),
      })),
    ]);
    expect(answers.map((e) => responseEnvelopeOf(e)?.status)).toEqual(Array(4).fill("cancelled"));
    // The agent that asked hears the request was cancelled, as a wait made now does.
    expect(heard).toMatchObject(
      ["perm", "one", "two"].map((requestId) => ({ requestId, status: "cancelled" })),
    );
    for (const request of ["perm", "one", "two"]) {
      const waited = await raw(t.url, "GET", `/api/hitl/requests/${request}/wait`, { token: t.tokens.admin });
      expect(waited.body, request).toMatchObject({ requestId: request, status: "cancelled" });
    }
  } finally {
    await t.cleanup();
  }
});
