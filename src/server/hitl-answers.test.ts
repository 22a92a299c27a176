// nui's respond() on a permission request: only an answer that says yes allows the tool. A body whose approval
// is not a boolean, whose decision is neither allow nor deny, or whose status is not an answer is refused
// naming the field, and the request stays pending: before, all of them allowed the tool.
import { describe, expect, it } from "vitest";
import { collect, raw, settled } from "../testing/http.js";
import { useTestDaemon } from "../testing/use-daemon.js";

const t = useTestDaemon();

const hitl = (method: string, path: string, body?: unknown) =>
  raw(t.url, method, `/api/hitl/requests${path}`, {
    token: t.tokens.admin,
    ...(body !== undefined ? { body } : {}),
  });

/** A turn of the echo harness whose echo call waits on a permission request; its id. */
async function asking() {
  const client = t.client();
  const { id } = await client.create({
    harness: "echo",
    config: { tools: ["echo"] },
    permissions: { tools: { echo: "ask" } },
  });
  const { turn } = await client.prompt(id, "echo: may I?");
  const asked = await collect(client, id, (e) => e.type === "permission.requested");
  return { client, id, turn, requestId: (asked.at(-1)!.data as { id: string }).id };
}

describe("nui HITL respond on a permission request", () => {
  it("refuses an answer that does not say yes or no, and leaves the request pending", async () => {
    const { client, id, turn, requestId } = await asking();
    const malformed: [unknown, RegExp][] = [
      [{ answers: { approved: "false" } }, /answers\.approved/],
      [{ status: "answered", answers: { approved: 0 } }, /answers\.approved/],
      [{ answers: { decision: "nope" } }, /answers\.decision/],
      [{ status: "pending" }, /status/],
      [{ status: "delivered", answers: { approved: true } }, /status/],
      // The host's own verdict when the wait passes: no client may log a timeout that did not happen.
      [{ status: "expired" }, /"status.*expired.* is the host's verdict.*answered.*declined.*cancelled/],
    ];
    for (const [body, named] of malformed) {
      const refused = await hitl("POST", `/${requestId}/respond`, body);
      expect(refused.status, JSON.stringify(body)).toBe(400);
      expect(JSON.stringify(refused.body)).toMatch(named);
    }
    const view = await client.session(id);
    expect(view.pending?.map((p) => p.id)).toContain(requestId);
    const denied = await hitl("POST", `/${requestId}/respond`, { answers: { approved: false } });
    expect(denied.status, JSON.stringify(denied.body)).toBe(200);
    const events = await collect(client, id, settled(turn));
    const resolved = events.filter((e) => e.type === "permission.resolved");
    expect(resolved.map((e) => (e.data as { decision: string }).decision)).toEqual(["deny"]);
  });

  it("allows on nui's yes: status answered, with or without answers.approved true", async () => {
    for (const body of [{ status: "answered" }, { answers: { approved: true } }]) {
      const { client, id, turn, requestId } = await asking();
      const answered = await hitl("POST", `/${requestId}/respond`, body);
      expect(answered.status, JSON.stringify(answered.body)).toBe(200);
      const events = await collect(client, id, settled(turn));
      const resolved = events.filter((e) => e.type === "permission.resolved");
      expect(resolved.map((e) => (e.data as { decision: string }).decision)).toEqual(["allow"]);
    }
  });
});

describe("nui HITL respond on a question", () => {
  it("refuses an answered status with no answer for it, naming the field, and takes a non-text answer as JSON", async () => {
    const client = t.client();
    const { id } = await client.create({ harness: "echo", config: { options: { delay_ms: 25 } } });
    const { turn } = await client.prompt(id, Array.from({ length: 400 }, (_, i) => `w${i}`).join(" "));
    for (const requestId of ["empty", "listed"])
      await hitl("POST", "", {
        kind: "question",
        sessionId: id,
        requestId,
        payload: { message: "Colours?" },
      });
    // Logged as the answer "{}" before: the person said nothing, and the harness was told they did.
    const refused = await hitl("POST", "/empty/respond", { status: "answered" });
    expect(refused.status, JSON.stringify(refused.body)).toBe(400);
    expect((refused.body as { error: { message: string } }).error.message).toBe(
      'field "answers": no answer to question "Colours?"; send it as answers["Colours?"] (or answers.answer), or status "declined" to refuse it',
    );
    expect((await client.session(id)).pending?.map((p) => p.id)).toContain("empty");
    const listed = await hitl("POST", "/listed/respond", { answers: { "Colours?": ["red", "blue"] } });
    expect(listed.status, JSON.stringify(listed.body)).toBe(200);
    await client.interrupt(id);
    const events = await collect(client, id, settled(turn));
    const answered = events.filter((e) => e.type === "question.answered").map((e) => e.data);
    expect(answered).toContainEqual(expect.objectContaining({ id: "listed", answer: '["red","blue"]' }));
  });
});
