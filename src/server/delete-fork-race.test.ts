// A fork that comes while a delete of its source is between its check of the dependents and its removal. The
// delete found no session made from its source, the fork was made meanwhile (201), then the delete removed the
// source (204): the fork named a parent that was gone, and the part of its conversation read from the parent's log
// with it. A delete and the making of a session from its session now run one at a time (SessionService.sources):
// the fork that comes during the delete waits for it and finds no source (404), as one sent after it does; a delete
// that comes while a fork is being made waits for it and is refused (409) naming it, as one sent after it is.
import { afterEach, describe, expect, it } from "vitest";
import { DEFAULT_TENANT, type SessionRecord } from "../protocol/session.js";
import { startTestDaemon, type TestDaemon } from "../testing/daemon.js";
import { adminCall as call, checkpointedEchoSession } from "../testing/dependents.js";
import type { Hold } from "../testing/held-close.js";
import { holdDependentsRead } from "../testing/held-delete.js";
import { keyedSessionId } from "./keyed-creates.js";

let t: TestDaemon | undefined;
afterEach(async () => {
  await t?.cleanup();
  t = undefined;
});

type Making = { route: "fork" | "handoff"; body: unknown };

/**
 * Sends a keyed fork or handoff of session `id` and resolves once it has read its key's record (the first thing it
 * does) and then waits without looking at its source, or, if it looked at its source, once it is answered.
 */
async function madeFrom(d: TestDaemon, id: string, { route, body }: Making, key: string) {
  const made = keyedSessionId(DEFAULT_TENANT, route, id, key);
  const record = d.brain.record.bind(d.brain);
  let keyRead!: () => void;
  const keyWasRead = new Promise<void>((r) => (keyRead = r));
  let sourceLooked = false;
  d.brain.record = (sid: string) => {
    const read = record(sid);
    // Read or not found, what the fork does next up to its next file call is done before setImmediate's turn.
    const next = () => setImmediate(keyRead);
    if (sid === made) read.then(next, next);
    if (sid === id) sourceLooked = true;
    return read;
  };
  const answer = call(d, "POST", `/v1/sessions/${id}/${route}`, body, key);
  await Promise.race([keyWasRead, answer]);
  d.brain.record = record;
  if (sourceLooked) await answer;
  return { answer, made };
}

const makings: Making[] = [
  { route: "fork", body: {} },
  { route: "handoff", body: { to: "echo" } },
];

describe("a fork or handoff while a delete of its source is under way", () => {
  it.each(makings)(
    "a $route waits for the delete and finds no source (404): never one whose parent is gone",
    async (making) => {
      t = await startTestDaemon();
      const id = await checkpointedEchoSession(t);
      const held = holdDependentsRead(t);
      const deleted = call(t, "DELETE", `/v1/sessions/${id}`);
      await held.reached;
      const { answer, made } = await madeFrom(t, id, making, `${making.route}-during-delete`);
      held.release();
      const [deleteAnswer, answered] = [await deleted, await answer];
      expect(deleteAnswer.status, JSON.stringify(deleteAnswer.body)).toBe(204);
      expect(answered.status, JSON.stringify(answered.body)).toBe(404);
      expect((answered.body.error as { message: string }).message).toBe(`no session "${id}"`);
      expect((await call(t, "GET", `/v1/sessions/${made}`)).status).toBe(404);
      // No session left names a parent that is gone.
      const sessions = (await call(t, "GET", "/v1/sessions")).body.sessions as SessionRecord[];
      expect(sessions.filter((s) => (s.forked_from ?? s.handoff_from) !== undefined)).toEqual([]);
    },
  );
});

/** Holds the next making of a session's record (a fork's or handoff's, its source read) until `release`. */
function holdMaking(d: TestDaemon): Hold {
  type Maker = { createRecord: (...args: unknown[]) => Promise<unknown> };
  const brain = d.brain as unknown as Maker;
  const createRecord = brain.createRecord;
  let reach!: () => void;
  let release!: () => void;
  const reached = new Promise<void>((r) => (reach = r));
  const gate = new Promise<void>((r) => (release = r));
  brain.createRecord = async (...args) => {
    brain.createRecord = createRecord;
    reach();
    await gate;
    return createRecord.apply(d.brain, args);
  };
  return { reached, release };
}

/**
 * Sends a keyed delete of session `id` and resolves once it has looked for its tombstone (the first thing it does)
 * and then waits without looking at the session, or, if it looked at the session, once it is answered.
 */
async function deleteSent(d: TestDaemon, id: string, key: string) {
  const deletes = d.brain.deletes!;
  const list = deletes.list.bind(deletes);
  const record = d.brain.record.bind(d.brain);
  let tombstonesRead!: () => void;
  const wereRead = new Promise<void>((r) => (tombstonesRead = r));
  let sessionLooked = false;
  deletes.list = (tenant) => {
    const read = list(tenant);
    const next = () => setImmediate(tombstonesRead);
    read.then(next, next);
    return read;
  };
  d.brain.record = (sid: string) => {
    if (sid === id) sessionLooked = true;
    return record(sid);
  };
  const answer = call(d, "DELETE", `/v1/sessions/${id}`, undefined, key);
  await Promise.race([wereRead, answer]);
  deletes.list = list;
  d.brain.record = record;
  if (sessionLooked) await answer;
  return { answer };
}

describe("a delete while a fork or handoff of its session is being made", () => {
  it.each(makings)("waits for the $route and is refused (409) naming it", async ({ route, body }) => {
    t = await startTestDaemon();
    const id = await checkpointedEchoSession(t);
    const held = holdMaking(t);
    const making = call(t, "POST", `/v1/sessions/${id}/${route}`, body);
    await held.reached;
    const { answer: deleted } = await deleteSent(t, id, `delete-during-${route}`);
    held.release();
    const made = await making;
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    const refused = await deleted;
    expect(refused.status, JSON.stringify(refused.body)).toBe(409);
    expect((refused.body.error as { message: string }).message).toContain(`(${made.body.id as string})`);
    expect((await call(t, "GET", `/v1/sessions/${id}`)).status).toBe(200);
  });
});
