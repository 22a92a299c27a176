// What the tests of a request racing its session's close or delete hold: the close where it writes the session's
// record (its directory's fsync, held as a stalled disk holds it), the delete at its session.closed's commit, a
// command's read of the log, and the command itself until it waits for the close to end (or has answered).
import type { Brain } from "../core/brain.js";
import { nodeLogIO } from "../store/fs/log-io.js";
import { type TestIO, testIO } from "../store/fs/testing/fault-io.js";
import type { TestDaemon } from "./daemon.js";
import { type Raw, raw } from "./http.js";

export interface Hold {
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

export interface HeldIO {
  io: TestIO;
  /** Holds the next fsync of a directory whose path has `dir` in it (a session's record is written there). */
  holdDir: (dir: string) => Hold;
  /** Holds the next read of a log's file. */
  holdRead: () => Hold;
}

/** The file calls, whose next fsync of a directory under `dir` (holdDir), next read (holdRead) or commit is held. */
export function heldIO(): HeldIO {
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

/** A close or delete of a session, held in its gap: `ended` is its answer once `release` lets it go on. */
export interface HeldEnd {
  ended: Promise<Raw>;
  release: () => void;
}

/** Closes session `id`, held writing its record: the session is closed (its log too) and still registered. */
export async function heldClose(t: TestDaemon, { holdDir }: HeldIO, id: string): Promise<HeldEnd> {
  const held = holdDir(id);
  const ended = raw(t.url, "POST", `/v1/sessions/${id}/close`, { token: t.tokens.admin });
  await held.reached;
  return { ended, release: held.release };
}

/** Deletes session `id`, held at its session.closed's commit: the session no longer registered, its log open. */
export async function heldDelete(t: TestDaemon, { io }: HeldIO, id: string): Promise<HeldEnd> {
  const release = io.holdDurable();
  const before = io.counts[io.durable];
  const ended = raw(t.url, "DELETE", `/v1/sessions/${id}`, { token: t.tokens.admin });
  while (io.counts[io.durable] === before) await new Promise((resolve) => setImmediate(resolve));
  return { ended, release };
}

/**
 * Sends `send` and resolves once it waits for a close or delete of session `id` to end (Brain.closeDone), or has
 * been answered: what it did before then took no file call, so it was done while the close was held.
 */
export async function sentWhileHeld(
  brain: Brain,
  id: string,
  send: () => Promise<Raw>,
): Promise<{ answer: Promise<Raw> }> {
  const closeDone = brain.closeDone;
  let waits!: () => void;
  const waiting = new Promise<void>((resolve) => (waits = resolve));
  brain.closeDone = (sid: string) => {
    if (sid === id) waits();
    return closeDone(sid);
  };
  const answer = send();
  await Promise.race([waiting, answer]);
  brain.closeDone = closeDone;
  return { answer };
}
