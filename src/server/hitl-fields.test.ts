// nui's HITL questions keep everything nui sent (title, message, header, option descriptions) in Brain's
// question event, in REST's pending requests and back in nui's envelopes; and nui's respond() answers a
// request while another client controls the session (an answer, not a command).
import { describe, expect, it } from "vitest";
import { ClientError } from "../client/client.js";
import type { PendingRequest } from "../core/pending.js";
import { questionsOf } from "../harnesses/nui/hitl-bridge.js";
import { collect, NUI_RELEASE_QUESTION, raw, settled } from "../testing/http.js";
import { useTestDaemon } from "../testing/use-daemon.js";
import { requestEnvelopeOf } from "./hitl/envelopes.js";

const t = useTestDaemon();

const long = Array.from({ length: 400 }, (_, i) => `w${i}`).join(" ");
const hitl = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
  raw(t.url, method, `/api/hitl/requests${path}`, {
    token: t.tokens.admin,
    headers,
    ...(body !== undefined ? { body } : {}),
  });

const payload = NUI_RELEASE_QUESTION;
const asBrain = {
  question: "Where should it go?",
  options: ["beta", "stable"],
  option_descriptions: { beta: "testers only" },
  title: "Release",
  message: "Pick how to ship the build.",
  header: "Channel",
};

describe("nui question fields", () => {
  it("reach the question event and REST's pending requests intact", async () => {
    const client = t.client({ client: "alice" });
    const { id } = await client.create({ harness: "echo", config: { options: { delay_ms: 25 } } });
    const { turn } = await client.prompt(id, long);
    const created = await hitl("POST", "", { kind: "question", sessionId: id, payload });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const requestId = created.body.requestId as string;
    const asked = await collect(client, id, (e) => e.type === "question.requested");
    // Logged with the expiry nui's envelope gave it.
    const expires_at = created.body.expiresAt;
    expect(asked.at(-1)?.data).toEqual({ id: requestId, ...asBrain, expires_at });
    const view = await client.session(id);
    expect(view.pending).toEqual([
      expect.objectContaining({
        kind: "question.requested",
        id: requestId,
        data: { id: requestId, ...asBrain, expires_at },
      }),
    ]);
    await client.answer(id, requestId, { answer: "beta" });
    await client.interrupt(id);
    await collect(client, id, settled(turn));
  });

  it("go back into nui's envelope for a question any harness asked", () => {
    const request: PendingRequest = {
      kind: "question.requested",
      id: "q1",
      turn: "t1",
      data: { id: "q1", ...asBrain },
    };
    expect(requestEnvelopeOf("s1", request).payload).toEqual({
      title: "Release",
      message: "Pick how to ship the build.",
      questions: [
        {
          question: "Where should it go?",
          header: "Channel",
          options: [{ label: "beta", description: "testers only" }, { label: "stable" }],
        },
      ],
    });
  });

  it("are kept per question, the request's title and message going with each", () => {
    const two = questionsOf("question", {
      ...payload,
      questions: [...payload.questions, { question: "Notify?", options: ["yes", "no"] }],
    });
    expect(two).toEqual([
      { key: "Where should it go?", ...asBrain },
      {
        key: "Notify?",
        question: "Notify?",
        options: ["yes", "no"],
        title: "Release",
        message: "Pick how to ship the build.",
      },
    ]);
    expect(questionsOf("freeform", { title: "Note", message: "Anything to add?" })).toEqual([
      { key: "answer", question: "Anything to add?", title: "Note", message: "Anything to add?" },
    ]);
  });
});

describe("nui's respond() while a client controls the session", () => {
  it("answers the request: an answer, not a command", async () => {
    const alice = t.client({ client: "alice" });
    const { id } = await alice.create({ harness: "echo", config: { options: { delay_ms: 25 } } });
    const { turn } = await alice.prompt(id, long); // alice now controls the session
    const created = await hitl("POST", "", { kind: "question", sessionId: id, payload });
    const requestId = created.body.requestId as string;
    await collect(alice, id, (e) => e.type === "question.requested");
    // Another client driving the session is still refused...
    const bob = t.client({ client: "bob" });
    await expect(bob.interrupt(id)).rejects.toBeInstanceOf(ClientError);
    // ...but nui's respond(), with no client id as nui's SDK sends it, or with one, answers.
    const responded = await hitl("POST", `/${requestId}/respond`, {
      status: "answered",
      answers: { "Where should it go?": "stable" },
      respondedBy: { channel: "nui-ui" },
    });
    expect(responded.status, JSON.stringify(responded.body)).toBe(200);
    expect(responded.body).toMatchObject({ requestId, status: "answered", answers: { answer: "stable" } });
    const events = await collect(alice, id, (e) => e.type === "question.answered");
    expect(events.at(-1)?.data).toEqual({
      id: requestId,
      answer: "stable",
      answered_by: { tenant: "default", token: "admin" },
    });
    const second = await hitl("POST", "", { kind: "question", sessionId: id, payload });
    const secondId = second.body.requestId as string;
    await collect(alice, id, (e) => e.type === "question.requested" && e.data.id === secondId);
    const fromBob = await hitl(
      "POST",
      `/${secondId}/respond`,
      { answers: { answer: "beta" } },
      { "x-brain-client": "bob" },
    );
    expect(fromBob.status, JSON.stringify(fromBob.body)).toBe(200);
    expect((await alice.session(id)).controller).toBe("alice");
    await alice.interrupt(id);
    await collect(alice, id, settled(turn));
  });
});
