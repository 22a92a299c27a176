// A command that comes while a close of its session is under way. The close had closed the session (its harness
// released, its log closed) and was writing its record when the command came: the command found the closed
// session still registered, and a keyed one read its closed log for the key (500 "event log ... is closed"), an
// unkeyed prompt got 409 "session ... is closed". A command that comes after a close is answered as once the close
// is done: a prompt reopens the session and runs, a steer or interrupt finds no turn (409).
// The close is held where it writes the record (its directory's fsync, held as a stalled disk holds it).
// A keyed command already reading the log for its key when the close came is refused: 409, saying that sent
// again it reopens the session (held at its read of the log, a read the close waits for before the file closes).
// A delete closes the session too: a prompt then opened the log a second time (409 "already open in this
// process"); it now waits for the delete and finds no session (404).
import { afterEach, describe, expect, it } from "vitest";
import { nodeLogIO } from "../store/fs/log-io.js";
import { type TestIO, testIO } from "../store/fs/testing/fault-io.js";
import { startTestDaemon, type TestDaemon } from "../testing/daemon.js";
import { collect, type Raw, raw, settled } from "../testing/http.js";

let t: TestDaemon | undefined;
afterEach(async () => {
  await t?.cleanup();
  t = undefined;
});

interface Hold {
  reached: Promise<void>;
  release: () => void;
}

function hold(): Hold & { reach: () => void; gate: Promise<void> } {
  let reach!: () => void;
  let release!: () => void;
  const reached = new Promise<void>((r) => (reach = r));
  const gate = new Promise<void>((r) => (release = r));
  return { reached, reach, release, gate };
}

/** The file calls, whose next fsync of a directory under `dir` (holdDir), next read (holdRead) or commit is held. */
function heldIO(): { io: TestIO; holdDir: (dir: string) => Hold; holdRead: () => Hold } {
  let dirHeld: (ReturnType<typeof hold> & { dir: string }) | undefined;
  let readHeld: ReturnType<typeof hold> | undefined;
  const io: TestIO = {
    ...testIO(),
    syncDir: async (path) => {
      const held = dirHeld;
      if (held && path.includes(held.dir)) {
        dirHeld = undefined;
        held.reach();
        await held.gate;
      }
      return nodeLogIO.syncDir(path);
    },
    read: async (...args) => {
      const held = readHeld;
      readHeld = undefined;
      held?.reach();
      await held?.gate;
      return nodeLogIO.read(...args);
    },
  };
  const holdDir = (dir: string) => {
    dirHeld = { ...hold(), dir };
    return dirHeld;
  };
  const holdRead = () => {
    readHeld = hold();
    return readHeld;
  };
  return { io, holdDir, holdRead };
}

type Holds = ReturnType<typeof heldIO>;

/** Sends `send` while the close of session `id` is held writing its record, and both answers. */
async function duringClose(
  id: string,
  holdDir: Holds["holdDir"],
  send: () => Promise<Raw>,
): Promise<{ answer: Raw; close: Raw }> {
  const d = t!;
  const hold = holdDir(id);
  const close = raw(d.url, "POST", `/v1/sessions/${id}/close`, { token: d.tokens.admin });
  await hold.reached;
  // The command has reached the daemon's sessions once it has read the session's record: only then the close goes
  // on (what the command does next, up to its answer or a wait, takes no file call: it is done before the fsync).
  const brain = d.brain;
  const original = brain.record.bind(brain);
  let asked!: () => void;
  const reached = new Promise<void>((r) => (asked = r));
  brain.record = (sid: string) => original(sid).finally(() => sid === id && asked());
  const answer = send();
  await Promise.race([reached, answer]);
  brain.record = original;
  hold.release();
  return { answer: await answer, close: await close };
}

async function daemonWithTurn(): Promise<{ id: string } & Holds> {
  const { io, holdDir, holdRead } = heldIO();
  t = await startTestDaemon({ io });
  const { id } = await t.client().create({ harness: "echo" });
  const { turn } = await t.client().prompt(id, "before");
  await collect(t.client(), id, settled(turn));
  return { id, io, holdDir, holdRead };
}

const post = (id: string, route: string, body?: unknown, key?: string) => () =>
  raw(t!.url, "POST", `/v1/sessions/${id}/${route}`, {
    token: t!.tokens.admin,
    ...(key ? { headers: { "Idempotency-Key": key } } : {}),
    ...(body ? { body } : {}),
  });

describe("a command while its session's close is under way", () => {
  for (const key of ["race-prompt", undefined]) {
    it(`a prompt (${key ? "keyed" : "unkeyed"}) reopens the session and runs, as after the close`, async () => {
      const { id, holdDir } = await daemonWithTurn();
      const { answer, close } = await duringClose(id, holdDir, post(id, "prompt", { text: "after" }, key));
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
    const { id, holdDir } = await daemonWithTurn();
    for (const [route, body] of [
      ["steer", { text: "more" }],
      ["interrupt", undefined],
    ] as const) {
      const { answer, close } = await duringClose(id, holdDir, post(id, route, body, `race-${route}`));
      expect(close.status, JSON.stringify(close.body)).toBe(200);
      expect(answer.status, `${route}: ${JSON.stringify(answer.body)}`).toBe(409);
      expect((answer.body.error as { message: string }).message).toContain("no turn is running");
    }
    const { answer, close } = await duringClose(id, holdDir, post(id, "checkpoints", undefined, "race-cp"));
    expect(close.status, JSON.stringify(close.body)).toBe(200);
    expect(answer.status, JSON.stringify(answer.body)).toBeLessThan(300);
    expect(answer.body).toMatchObject({ id: expect.any(String) });
  });

  it("a keyed prompt whose key the close overtook is refused (409 saying to send it again), not a 500", async () => {
    const { id, holdRead } = await daemonWithTurn();
    // The prompt reads the log for its key (the first keyed command: the keys' index is read then) and is held
    // there; the close comes, closes the session and its log; then the read goes on to the closed log.
    const read = holdRead();
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
    expect(closed.status, JSON.stringify(closed.body)).toBe(200);
    expect(answer.status, JSON.stringify(answer.body)).toBe(409);
    expect(answer.body.error).toMatchObject({
      code: "conflict",
      message: `session ${id} was closed while the command was being taken; sent again, it reopens the session`,
    });
    const { events } = await t!.client().log(id);
    expect(events.filter((e) => e.type === "user.prompt")).toHaveLength(1);
    expect(events.at(-1)?.type).toBe("session.closed");
    const again = await post(id, "prompt", { text: "overtaken" }, "overtaken-prompt")();
    expect(again.status, JSON.stringify(again.body)).toBe(202);
    await collect(t!.client(), id, settled(again.body.turn as string));
  });

  it('a prompt while the session is being deleted is not found (404), not 409 "already open"', async () => {
    const { id, io } = await daemonWithTurn();
    // The delete closes the session first: its session.closed is held from becoming durable.
    const release = io.holdDurable();
    const before = io.counts[io.durable];
    const deleted = raw(t!.url, "DELETE", `/v1/sessions/${id}`, { token: t!.tokens.admin });
    while (io.counts[io.durable] === before) await new Promise((resolve) => setImmediate(resolve));
    // Held until the prompt has answered, or waits for the delete to end (what it does now).
    const brain = t!.brain;
    const closeDone = brain.closeDone;
    let waits!: () => void;
    const waiting = new Promise<void>((resolve) => (waits = resolve));
    brain.closeDone = (sid: string) => {
      if (sid === id) waits();
      return closeDone(sid);
    };
    const prompt = post(id, "prompt", { text: "late" })();
    await Promise.race([waiting, prompt]);
    brain.closeDone = closeDone;
    release();
    const [answer, gone] = await Promise.all([prompt, deleted]);
    expect(gone.status, JSON.stringify(gone.body)).toBe(204);
    expect(answer.status, JSON.stringify(answer.body)).toBe(404);
    expect(answer.body.error).toMatchObject({ code: "not_found", message: `no session "${id}"` });
    expect((await raw(t!.url, "GET", `/v1/sessions/${id}`, { token: t!.tokens.admin })).status).toBe(404);
  });
});
