// A command that comes while a close of its session is under way. The close had closed the session (its harness
// released, its log closed) and was writing its record when the command came: the command found the closed
// session still registered, and a keyed one read its closed log for the key (500 "event log ... is closed"), an
// unkeyed prompt got 409 "session ... is closed". A command that comes after a close is answered as once the close
// is done: a prompt reopens the session and runs, a steer or interrupt finds no turn (409).
// The close is held where it writes the record (its directory's fsync, held as a stalled disk holds it).
// A keyed command already reading the log for its key when the close came is refused: 409, saying that sent
// again it reopens the session (held at its read of the log, a read the close waits for before the file closes).
// So is one whose read ends whole once the close has begun, before the log closes: its session no longer takes it.
// A delete closes the session too: a prompt then opened the log a second time (409 "already open in this
// process"); it now waits for the delete and finds no session (404).
import { afterEach, describe, expect, it } from "vitest";
import { startTestDaemon, type TestDaemon } from "../testing/daemon.js";
import { type HeldIO, heldClose, heldDelete, heldIO, sentWhileHeld } from "../testing/held-close.js";
import { collect, type Raw, raw, settled } from "../testing/http.js";

let t: TestDaemon | undefined;
afterEach(async () => {
  await t?.cleanup();
  t = undefined;
});

/** Sends `send` while the close of session `id` is held writing its record, and both answers. */
async function duringClose(
  id: string,
  held: HeldIO,
  send: () => Promise<Raw>,
): Promise<{ answer: Raw; close: Raw }> {
  const close = await heldClose(t!, held, id);
  const { answer } = await sentWhileHeld(t!.brain, id, send);
  close.release();
  return { answer: await answer, close: await close.ended };
}

async function daemonWithTurn(): Promise<{ id: string; held: HeldIO }> {
  const held = heldIO();
  t = await startTestDaemon({ io: held.io });
  const { id } = await t.client().create({ harness: "echo" });
  const { turn } = await t.client().prompt(id, "before");
  await collect(t.client(), id, settled(turn));
  return { id, held };
}

const post = (id: string, route: string, body?: unknown, key?: string) => () =>
  raw(t!.url, "POST", `/v1/sessions/${id}/${route}`, {
    token: t!.tokens.admin,
    ...(key ? { headers: { "Idempotency-Key": key } } : {}),
    ...(body ? { body } : {}),
  });

/**
 * A keyed prompt the close of session `id` overtook: refused 409 saying to send it again, never logged (the log
 * holds the first turn's prompt and ends closed); sent again (`again`), it reopens the session and runs.
 */
async function refusedForTheClose(
  id: string,
  answer: Raw,
  closed: Raw,
  again: () => Promise<Raw>,
): Promise<void> {
  expect(closed.status, JSON.stringify(closed.body)).toBe(200);
  expect(answer.status, JSON.stringify(answer.body)).toBe(409);
  expect(answer.body.error).toMatchObject({
    code: "conflict",
    message: `session ${id} was closed while the command was being taken; sent again, it reopens the session`,
  });
  const { events } = await t!.client().log(id);
  expect(events.filter((e) => e.type === "user.prompt")).toHaveLength(1);
  expect(events.at(-1)?.type).toBe("session.closed");
  const sent = await again();
  expect(sent.status, JSON.stringify(sent.body)).toBe(202);
  await collect(t!.client(), id, settled(sent.body.turn as string));
}

describe("a command while its session's close is under way", () => {
  for (const key of ["race-prompt", undefined]) {
    it(`a prompt (${key ? "keyed" : "unkeyed"}) reopens the session and runs, as after the close`, async () => {
      const { id, held } = await daemonWithTurn();
      const { answer, close } = await duringClose(id, held, post(id, "prompt", { text: "after" }, key));
      expect(close.status, JSON.stringify(close.body)).toBe(200);
      expect(answer.status, JSON.stringify(answer.body)).toBe(202);
      const turn = answer.body.turn as string;
      const events = await collect(t!.client(), id, settled(turn));
      expect(events.at(-1)?.data).toEqual({ status: "completed" });
      const types = events.map((e) => e.type);
      // Closed first, then the prompt's turn, whole.
      expect(types.lastIndexOf("session.closed")).toBeLessThan(types.indexOf("user.prompt", 4));
      const prompts = events.filter((e) => e.type === "user.prompt").map((e) => e.turn);
      const settledTurns = events.filter((e) => e.type === "turn.settled").map((e) => e.turn);
      expect(settledTurns).toEqual(prompts);
      expect((await t!.client().session(id)).status).toBe("open");
    });
  }

  it("a keyed steer or interrupt finds no turn (409), a keyed checkpoint is taken: never a 500", async () => {
    const { id, held } = await daemonWithTurn();
    for (const [route, body] of [
      ["steer", { text: "more" }],
      ["interrupt", undefined],
    ] as const) {
      const { answer, close } = await duringClose(id, held, post(id, route, body, `race-${route}`));
      expect(close.status, JSON.stringify(close.body)).toBe(200);
      expect(answer.status, `${route}: ${JSON.stringify(answer.body)}`).toBe(409);
      expect((answer.body.error as { message: string }).message).toContain("no turn is running");
    }
    const { answer, close } = await duringClose(id, held, post(id, "checkpoints", undefined, "race-cp"));
    expect(close.status, JSON.stringify(close.body)).toBe(200);
    expect(answer.status, JSON.stringify(answer.body)).toBeLessThan(300);
    expect(answer.body).toMatchObject({ id: expect.any(String) });
  });

  it("a keyed prompt whose key the close overtook is refused (409 saying to send it again), not a 500", async () => {
    const { id, held } = await daemonWithTurn();
    // The prompt reads the log for its key (the first keyed command: the keys' index is read then) and is held
    // there; the close comes, closes the session and its log; then the read goes on to the closed log.
    const read = held.holdRead();
    const prompt = post(id, "prompt", { text: "overtaken" }, "overtaken-prompt")();
    await read.reached;
    const session = t!.brain.liveSession(id)!.session;
    const closedLogged = new Promise<void>((resolve) =>
      session.log.subscribe((events) => events.some((e) => e.type === "session.closed") && resolve()),
    );
    const close = raw(t!.url, "POST", `/v1/sessions/${id}/close`, { token: t!.tokens.admin });
    await closedLogged;
    // The close closes the log in the same run of the event loop as its session.closed is durable.
    await new Promise((resolve) => setImmediate(resolve));
    read.release();
    const [answer, closed] = await Promise.all([prompt, close]);
    await refusedForTheClose(
      id,
      answer,
      closed,
      post(id, "prompt", { text: "overtaken" }, "overtaken-prompt"),
    );
  });

  it("a keyed prompt whose key read ends as the close begins is refused (409 saying to send it again)", async () => {
    const { id, held } = await daemonWithTurn();
    // The prompt's read of the log for its key is held; the close comes and, its session closed to commands, is
    // held at the commit of what it logs (session.closed): the log is not closed yet, so the read ends whole (no
    // command ran under the key) and the prompt goes on, into the session being closed.
    const read = held.holdRead();
    const prompt = post(id, "prompt", { text: "closing" }, "closing-prompt")();
    await read.reached;
    const release = held.io.holdDurable();
    const before = held.io.counts[held.io.durable];
    const close = raw(t!.url, "POST", `/v1/sessions/${id}/close`, { token: t!.tokens.admin });
    while (held.io.counts[held.io.durable] === before) await new Promise((resolve) => setImmediate(resolve));
    read.release();
    const answer = await prompt;
    release();
    const closed = await close;
    await refusedForTheClose(id, answer, closed, post(id, "prompt", { text: "closing" }, "closing-prompt"));
  });

  it('a prompt while the session is being deleted is not found (404), not 409 "already open"', async () => {
    const { id, held } = await daemonWithTurn();
    // The delete closes the session first: its session.closed is held from becoming durable.
    const deleted = await heldDelete(t!, held, id);
    // Held until the prompt has answered, or waits for the delete to end (what it does now).
    const { answer: prompt } = await sentWhileHeld(t!.brain, id, post(id, "prompt", { text: "late" }));
    deleted.release();
    const [answer, gone] = await Promise.all([prompt, deleted.ended]);
    expect(gone.status, JSON.stringify(gone.body)).toBe(204);
    expect(answer.status, JSON.stringify(answer.body)).toBe(404);
    expect(answer.body.error).toMatchObject({ code: "not_found", message: `no session "${id}"` });
    expect((await raw(t!.url, "GET", `/v1/sessions/${id}`, { token: t!.tokens.admin })).status).toBe(404);
  });
});
