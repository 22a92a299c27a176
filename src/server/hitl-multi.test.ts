// nui's respond() on a request of several questions answers the request, as nui's API does: each question gets
// its answer from the one body, and the request's wait gets them all.
import { expect, it } from "vitest";
import { collect, raw, settled } from "../testing/http.js";
import { useTestDaemon } from "../testing/use-daemon.js";

const t = useTestDaemon();

const hitl = (method: string, path: string, body?: unknown) =>
  raw(t.url, method, `/api/hitl/requests${path}`, {
    token: t.tokens.admin,
    ...(body !== undefined ? { body } : {}),
  });

it("answers every question of a request from one respond body", async () => {
  const client = t.client();
  const { id } = await client.create({ harness: "echo", config: { options: { delay_ms: 25 } } });
  const { turn } = await client.prompt(id, Array.from({ length: 400 }, (_, i) => `w${i}`).join(" "));
  const created = await hitl("POST", "", {
    kind: "question",
    sessionId: id,
    requestId: "multi",
    payload: { questions: [{ question: "Colour?" }, { question: "Size?" }] },
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  await collect(client, id, (e) => e.type === "question.requested");
  const waiting = hitl("GET", "/multi/wait");
  const answers = { "Colour?": "red", "Size?": "large" };
  const responded = await hitl("POST", "/multi/respond", { status: "answered", answers });
  expect(responded.status, JSON.stringify(responded.body)).toBe(200);
  expect((await waiting).body).toMatchObject({ requestId: "multi", status: "answered", answers });
  // A request whose own id looks like another's second question is its own: answered by its own respond only.
  await hitl("POST", "", {
    kind: "question",
    sessionId: id,
    requestId: "solo",
    payload: { message: "One?" },
  });
  await hitl("POST", "", {
    kind: "question",
    sessionId: id,
    requestId: "solo#2",
    payload: { message: "Two?" },
  });
  expect((await hitl("POST", "/solo/respond", { answers: { answer: "1" } })).status).toBe(200);
  const view = await client.session(id);
  expect(view.pending?.map((p) => p.id)).toEqual(["solo#2"]);
  await client.interrupt(id);
  const events = await collect(client, id, settled(turn));
  const answered = events.filter((e) => e.type === "question.answered").map((e) => e.data);
  expect(answered.slice(0, 3)).toEqual([
    expect.objectContaining({ id: "multi", answer: "red" }),
    expect.objectContaining({ id: "multi#2", answer: "large" }),
    expect.objectContaining({ id: "solo", answer: "1" }),
  ]);
});
