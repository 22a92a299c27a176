// Request ids are the asker's (a model's tool-call id, an extension's requestId): two sessions of one tenant can
// each have a request "same" pending. nui's respond() answered whichever it met first; now it refuses to guess
// (409 naming the sessions and how to choose) and answers the one a `sessionId` query names.
import { expect, it } from "vitest";
import { collect, raw } from "../testing/http.js";
import { useTestDaemon } from "../testing/use-daemon.js";

const t = useTestDaemon();

const hitl = (method: string, path: string, body?: unknown) =>
  raw(t.url, method, `/api/hitl/requests${path}`, {
    token: t.tokens.admin,
    ...(body !== undefined ? { body } : {}),
  });

it("answers a request id pending in two sessions only in the session named", async () => {
  const client = t.client();
  const ids: string[] = [];
  for (let i = 0; i < 2; i++) {
    const { id } = await client.create({ harness: "echo", config: { options: { delay_ms: 25 } } });
    await client.prompt(id, Array.from({ length: 400 }, (_, w) => `w${w}`).join(" "));
    const created = await hitl("POST", "", {
      kind: "question",
      sessionId: id,
      requestId: "same",
      payload: { message: "Which?" },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    await collect(client, id, (e) => e.type === "question.requested");
    ids.push(id);
  }
  const [first, second] = ids as [string, string];
  const guessed = await hitl("POST", "/same/respond", { answers: { answer: "x" } });
  expect(guessed.status).toBe(409);
  expect(JSON.stringify(guessed.body)).toContain(`?sessionId=`);
  expect(JSON.stringify(guessed.body)).toContain(second);
  const named = await hitl("POST", `/same/respond?sessionId=${second}`, { answers: { answer: "two" } });
  expect(named.status, JSON.stringify(named.body)).toBe(200);
  expect((await client.session(second)).pending ?? []).toEqual([]);
  expect((await client.session(first)).pending?.map((p) => p.id)).toEqual(["same"]);
  // Now pending in one session only: answered without naming it.
  expect((await hitl("POST", "/same/respond", { answers: { answer: "one" } })).status).toBe(200);
  for (const id of ids) await client.interrupt(id);
});
