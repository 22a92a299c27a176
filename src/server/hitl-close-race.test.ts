// An answer without an Idempotency-Key that comes while a close or delete of its session is under way. nui's HITL
// respond() answers without taking control (SessionService.answer with command: false), so it did not wait for the
// close as a /v1 answer does (SessionService.drive): during a close, the closed session was still registered, its
// request no longer pending (the close gave it up), and the log read for how it ended failed with 500 "event log
// ... is closed"; during a delete, a respond naming the session opened it again and got 409 "session ... is already
// open in this process". Now each is answered as after the close (the request no longer pending, 404) or the
// delete (no session, 404), and the log holds the request given up by the close, never an answer after it.
import { afterEach, describe, expect, it } from "vitest";
import type { HarnessFactory } from "../core/harness.js";
import { quietHarness } from "../testing/brain.js";
import { startTestDaemon, type TestDaemon } from "../testing/daemon.js";
import {
  type HeldEnd,
  type HeldIO,
  heldClose,
  heldDelete,
  heldIO,
  sentWhileHeld,
} from "../testing/held-close.js";
import { collect, type Raw, raw } from "../testing/http.js";

let t: TestDaemon | undefined;
afterEach(async () => {
  await t?.cleanup();
  t = undefined;
});

/** Every turn asks for permission to use "deploy" as request "req-close", and waits for the answer. */
const asking: HarnessFactory = {
  name: "asking",
  supportsSteering: false,
  open: async (options) =>
    quietHarness({
      prompt: async (_text, ctx) => {
        await options.permit(ctx.turn, { tool: "deploy" }, ctx.signal, { id: "req-close" });
        return { interrupted: ctx.signal.aborted };
      },
    }),
};

/** A session whose turn waits for the answer to "req-close". */
async function asked(): Promise<{ id: string; held: HeldIO }> {
  const held = heldIO();
  t = await startTestDaemon({ io: held.io, factories: [asking] });
  const client = t.client();
  const { id } = await client.create({ harness: "asking", permissions: { tools: { deploy: "ask" } } });
  await client.prompt(id, "go");
  await collect(client, id, (e) => e.type === "permission.requested");
  return { id, held };
}

const ends = { close: heldClose, delete: heldDelete } as const;

/** Sends `send` while the close or delete of session `id` is held in its gap; both answers. */
async function during(
  end: keyof typeof ends,
  id: string,
  held: HeldIO,
  send: () => Promise<Raw>,
): Promise<{ answer: Raw; ended: Raw }> {
  const ending: HeldEnd = await ends[end](t!, held, id);
  const { answer } = await sentWhileHeld(t!.brain, id, send);
  ending.release();
  return { answer: await answer, ended: await ending.ended };
}

const respond = (sessionId?: string) => () =>
  raw(t!.url, "POST", `/api/hitl/requests/req-close/respond${sessionId ? `?sessionId=${sessionId}` : ""}`, {
    token: t!.tokens.admin,
    body: { status: "answered", answers: { approved: true } },
  });

/** The log after the close: the request given up by it, no answer of a client, closed last. */
async function givenUpByTheClose(id: string): Promise<void> {
  const { events } = await t!.client().log(id);
  const answers = events.filter((e) => e.type === "permission.resolved");
  expect(answers.map((e) => e.data)).toEqual([
    expect.objectContaining({ id: "req-close", unanswered: "cancelled" }),
  ]);
  expect(events.at(-1)?.type).toBe("session.closed");
}

describe("an unkeyed answer while its session's close or delete is under way", () => {
  for (const named of [false, true]) {
    it(`nui's respond() (${named ? "naming" : "not naming"} the session) during a close: 404 as after it, not a 500`, async () => {
      const { id, held } = await asked();
      const { answer, ended } = await during("close", id, held, respond(named ? id : undefined));
      expect(ended.status, JSON.stringify(ended.body)).toBe(200);
      expect(answer.status, JSON.stringify(answer.body)).toBe(404);
      const where = named ? `your session ${id}` : "your sessions";
      expect(answer.body.error).toMatchObject({
        code: "not_found",
        message: `no pending HITL request "req-close" in ${where} (nor answered in their last 1000 events)`,
      });
      // What it gets once the close is done.
      expect(await respond(named ? id : undefined)()).toMatchObject({ status: 404, body: answer.body });
      await givenUpByTheClose(id);
    });
  }

  it('nui\'s respond() naming the session during a delete: 404 "no session", not 409 "already open"', async () => {
    const { id, held } = await asked();
    const { answer, ended } = await during("delete", id, held, respond(id));
    expect(ended.status, JSON.stringify(ended.body)).toBe(204);
    expect(answer.status, JSON.stringify(answer.body)).toBe(404);
    expect(answer.body.error).toMatchObject({ code: "not_found", message: `no session "${id}"` });
    expect((await raw(t!.url, "GET", `/v1/sessions/${id}`, { token: t!.tokens.admin })).status).toBe(404);
  });

  it("nui's respond() whose session the close overtook after it found the request pending: 409, no answer logged", async () => {
    const { id, held } = await asked();
    // The respond found the request pending and is held at its answer's read of the session's record; the close
    // comes, gives the request up, closes the log and is held writing the record; then the answer goes on.
    const brain = t!.brain;
    const record = brain.record;
    let reach!: () => void;
    let go!: () => void;
    const reached = new Promise<void>((resolve) => (reach = resolve));
    const gate = new Promise<void>((resolve) => (go = resolve));
    brain.record = async (sid: string) => {
      brain.record = record;
      reach();
      await gate;
      return record.call(brain, sid);
    };
    const answer = respond()();
    await reached;
    const close = await heldClose(t!, held, id);
    go();
    const answered = await answer;
    close.release();
    expect((await close.ended).status).toBe(200);
    // The closed session, still registered, no longer has it pending: refused, as the close's give-up came first.
    expect(answered.status, JSON.stringify(answered.body)).toBe(409);
    expect((answered.body.error as { message: string }).message).toContain(
      `no pending permission request or question "req-close" in session ${id}`,
    );
    await givenUpByTheClose(id);
  });

  it("a /v1 answer during a close finds the request no longer pending (409), not a 500", async () => {
    const { id, held } = await asked();
    const answerIt = () =>
      raw(t!.url, "POST", `/v1/sessions/${id}/requests/req-close`, {
        token: t!.tokens.admin,
        body: { decision: "allow" },
      });
    const { answer, ended } = await during("close", id, held, answerIt);
    expect(ended.status, JSON.stringify(ended.body)).toBe(200);
    expect(answer.status, JSON.stringify(answer.body)).toBe(409);
    expect((answer.body.error as { message: string }).message).toContain(
      `no pending permission request or question "req-close" in session ${id}`,
    );
    // The answer reopened the session, as one after the close does: it was closed first, and holds no answer.
    const { events } = await t!.client().log(id);
    expect(events.filter((e) => e.type === "permission.resolved")).toHaveLength(1);
    expect(events.filter((e) => e.type === "session.closed")).toHaveLength(1);
  });
});
