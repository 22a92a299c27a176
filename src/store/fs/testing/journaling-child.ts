// A real process writing a store's logs through its journal (journal.ts), to be SIGKILLed at a chosen point: what
// the journal's crash tests need of the process whose acknowledged events only its journal holds.
import path from "node:path";
import { pathToFileURL } from "node:url";
import { expect } from "vitest";
import { type ScriptChild, scriptChild } from "../../../testing/processes.js";

export type JournalingChild = ScriptChild;

/**
 * Runs `body` (module statements; `store` is a journaling FsSessionStore on `home`, `home` its path) and resolves
 * once it writes "ready" on its stdout. The body should then hold on (setInterval), its logs and journal open.
 */
export async function journalingChild(home: string, body: string): Promise<JournalingChild> {
  const module = pathToFileURL(
    path.join(import.meta.dirname, "../../../../dist/src/store/fs/session-store.js"),
  ).href;
  const script = `const { FsSessionStore } = await import(${JSON.stringify(module)});
    const home = ${JSON.stringify(home)};
    const store = new FsSessionStore(home, undefined, undefined, { journal: true });
    ${body}`;
  const child = scriptChild(script);
  try {
    await expect.poll(child.out, { timeout: 60_000 }).toContain("ready");
  } catch (err) {
    await child.kill();
    throw err;
  }
  return child;
}

/**
 * A body for journalingChild: sessions "a" then "b", three events each, one commit (one journal record) per
 * event: a1 a2 a3 b1 b2 b3, durable in the child's journal (their files never synced); then "ready".
 */
export const TWO_LOGS = `
  for (const id of ["a", "b"]) {
    await store.create({ id, harness: "process", config: { model: "m1" } });
    const log = await store.openLog(id);
    for (let k = 1; k <= 3; k++) await log.append([{ type: "assistant.delta", turn: "t1", data: { text: id + k } }]);
  }
  process.stdout.write("ready\\n");
  setInterval(() => {}, 1 << 30);`;

/** Session `id`'s log file in store home `home`. */
export const logIn = (home: string, id: string) => path.join(home, "sessions", id, "events.jsonl");
