// The store's journal (journal.ts) across a real crash: a child process appends to several sessions through it
// and is killed (SIGKILL) mid-stream; a new store on the home must hold every event the child had acknowledged,
// once, at its seq, in order.
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, beforeEach, expect, it } from "vitest";
import { scriptChild } from "../../testing/processes.js";
import { FsSessionStore } from "./session-store.js";

let home: string;

beforeEach(async () => {
  home = await fs.mkdtemp(path.join(os.tmpdir(), "brain-journal-kill-"));
});

afterEach(async () => {
  await fs.rm(home, { recursive: true, force: true });
});

/** The child: three sessions streaming at once; each acknowledged append is written (synchronously) as a line. */
function childScript(): string {
  const module = pathToFileURL(
    path.join(import.meta.dirname, "../../../dist/src/store/fs/session-store.js"),
  ).href;
  return `import { writeSync } from "node:fs";
    const { FsSessionStore } = await import(${JSON.stringify(module)});
    const store = new FsSessionStore(${JSON.stringify(home)}, undefined, undefined, { journal: true });
    const stream = async (id) => {
      await store.create({ id, harness: "process", config: { model: "m1" } });
      const log = await store.openLog(id);
      for (let k = 0; ; k++) {
        const [event] = await log.append([{ type: "assistant.delta", turn: "t1", data: { text: id + ":" + k } }]);
        writeSync(1, JSON.stringify({ id, seq: event.seq, text: id + ":" + k }) + "\\n");
      }
    };
    await Promise.all(["a", "b", "c"].map(stream));`;
}

it("holds every event a killed process acknowledged, in order, when a new store opens its home", async () => {
  const child = scriptChild(childScript());
  // Killed once each session has acknowledged some (the journal written, its logs' files not synced since).
  await expect
    .poll(
      () =>
        new Set(
          child
            .out()
            .split("\n")
            .filter((l) => l.endsWith("}"))
            .map((l) => JSON.parse(l).id),
        ).size,
      {
        timeout: 60_000,
      },
    )
    .toBe(3);
  await expect.poll(() => child.out().split("\n").length, { timeout: 60_000 }).toBeGreaterThan(150);
  await child.kill();
  const acked = child
    .out()
    .split("\n")
    .filter((line) => line.endsWith("}"))
    .map((line) => JSON.parse(line) as { id: string; seq: number; text: string });
  expect(await fs.readdir(path.join(home, "journal"))).toContainEqual(expect.stringMatching(/\.wal$/));
  const store = new FsSessionStore(home, undefined, undefined, { journal: true });
  for (const id of ["a", "b", "c"]) {
    const log = await store.openLog(id);
    const events = await log.read(0);
    await log.close();
    // Dense from 1; every acknowledged event at its seq, with its text (any later, unacknowledged one may follow).
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    const mine = acked.filter((a) => a.id === id);
    expect(events.length).toBeGreaterThanOrEqual(mine.length);
    for (const a of mine) expect((events[a.seq - 1]!.data as { text: string }).text).toBe(a.text);
  }
  await store.close();
});
