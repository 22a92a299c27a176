// A fork that comes while a delete of its source is between its check of the dependents and its removal. The
// delete found no session made from its source, the fork was made meanwhile (201), then the delete removed the
// source (204): the fork named a parent that was gone, and the part of its conversation read from the parent's log
// with it. A delete and the making of a session from its session now run one at a time (SessionService.sources):
// the fork that comes during the delete waits for it and finds no source (404), as one sent after it does.
import { afterEach, describe, expect, it } from "vitest";
import { DEFAULT_TENANT, type SessionRecord } from "../protocol/session.js";
import { startTestDaemon, type TestDaemon } from "../testing/daemon.js";
import { adminCall as call, checkpointedEchoSession } from "../testing/dependents.js";
import type { Hold } from "../testing/held-close.js";
import { keyedSessionId } from "./keyed-creates.js";

let t: TestDaemon | undefined;
afterEach(async () => {
  await t?.cleanup();
  t = undefined;
});

/** Holds the next read of the sessions of a tenant (the delete's look for sessions made from its own) once done. */
function holdDependentsRead(d: TestDaemon): Hold {
  const list = d.brain.list.bind(d.brain);
  let reach!: () => void;
  let release!: () => void;
  const reached = new Promise<void>((r) => (reach = r));
  const gate = new Promise<void>((r) => (release = r));
  d.brain.list = async (unreadable, tenant) => {
    const listed = await list(unreadable, tenant);
    if (tenant !== undefined) {
      d.brain.list = list;
      reach();
      await gate;
    }
    return listed;
  };
  return { reached, release };
}

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
