// Compaction and retention rewrite or remove a log's files: a journal (journal.ts) whose process held the log and
// died must be replayed into it before anything it replays into is rewritten, once the rewrite holds the log's
// lock (as an open does), or the events it acknowledged (durable in its journal only) are lost.
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import type { SessionEvent } from "../../protocol/events.js";
import { foldedEvents } from "./compact.js";
import { FsSessionStore } from "./session-store.js";
import { type JournalingChild, journalingChild } from "./testing/journaling-child.js";

let home: string;
let child: JournalingChild | undefined;

beforeEach(async () => {
  home = await fs.mkdtemp(path.join(os.tmpdir(), "brain-journal-rewrite-"));
});

afterEach(async () => {
  await child?.kill();
  child = undefined;
  await fs.rm(home, { recursive: true, force: true });
});

const events = () => path.join(home, "sessions", "a", "events.jsonl");

/** What a crash of the machine leaves of log "a": its active file up to `durable` bytes, no saved state. */
async function loseUnsynced(durable: number): Promise<void> {
  await fs.truncate(events(), durable);
  await fs.rm(`${events()}.state`, { force: true });
}

/** Log "a" as a new journaling store opens it. */
async function readAll(): Promise<SessionEvent[]> {
  const store = new FsSessionStore(home, undefined, undefined, { journal: true });
  try {
    const log = await store.openLog("a");
    try {
      return await log.read(0);
    } finally {
      await log.close();
    }
  } finally {
    await store.close();
  }
}

/**
 * Session "a" with two completed turns, one commit per event: the first synced (the log closed and opened again),
 * the second durable in the child's journal only. Says how long the file was when the first was synced, and
 * every event acknowledged.
 */
const twoTurns = `
  const turn = (id) => [
    { type: "user.prompt", turn: id, data: { text: "prompt " + id } },
    { type: "turn.started", turn: id, data: {} },
    { type: "assistant.delta", turn: id, data: { text: id + "-a" } },
    { type: "assistant.delta", turn: id, data: { text: id + "-b" } },
    { type: "assistant.message", turn: id, data: { text: id + "-a" + id + "-b" } },
    { type: "turn.settled", turn: id, data: { status: "completed" } },
  ];
  await store.create({ id: "a", harness: "process", config: { model: "m1" } });
  const acked = [];
  let log = await store.openLog("a");
  for (const e of turn("t1")) acked.push(...(await log.append([e])));
  await log.close();
  const { statSync } = await import("node:fs");
  const durable = statSync(home + "/sessions/a/events.jsonl").size;
  log = await store.openLog("a");
  for (const e of turn("t2")) acked.push(...(await log.append([e])));
  process.stdout.write(JSON.stringify({ durable, acked }) + "\\nready\\n");
  setInterval(() => {}, 1 << 30);`;

it("a compaction replays the journal of a log's owner that died after the compaction looked at the journals", async () => {
  child = await journalingChild(home, twoTurns);
  const { durable, acked } = JSON.parse(child.out().split("\n")[0]!) as {
    durable: number;
    acked: SessionEvent[];
  };
  const owner = child;
  // The owner lives while the compaction checks the home's journals, and dies before it takes the log's lock.
  const store = new FsSessionStore(home, undefined, undefined, {
    journal: true,
    beforeLogLock: async () => {
      await owner.kill();
      await loseUnsynced(durable);
    },
  });
  const result = await store.compact("a", { idleMs: 0 }).finally(store.close);
  expect(await readAll()).toEqual(foldedEvents(acked).kept);
  expect(result).toMatchObject({ eventsBefore: acked.length, turns: 2 });
});

/**
 * Session "a" past one segment (8 MiB of deltas): the sealed one synced as it was sealed, then the rest in the
 * new active segment, durable in the child's journal only. Says every event acknowledged.
 */
const rolled = `
  await store.create({ id: "a", harness: "process", config: { model: "m1" } });
  const acked = [];
  const log = await store.openLog("a");
  const big = "x".repeat(200_000);
  for (let k = 0; k < 45; k++)
    acked.push(...(await log.append([{ type: "assistant.delta", turn: "t1", data: { text: k + big } }])));
  for (let k = 0; k < 3; k++)
    acked.push(...(await log.append([{ type: "assistant.delta", turn: "t1", data: { text: "after " + k } }])));
  process.stdout.write(JSON.stringify({ acked: acked.map((e) => e.seq) }) + "\\nready\\n");
  setInterval(() => {}, 1 << 30);`;

// Retention rewrites no file a record replays into (a sealed segment's records are skipped), so it lost nothing
// even while its replay ran before the lock: the record of the first batch after the roll replayed at the next
// open, over the same header the retire had started the lost active file again with. Now it replays under the lock.
it("a retire loses none of the events of a log's owner that died after the retire looked at the journals", async () => {
  child = await journalingChild(home, rolled);
  const { acked } = JSON.parse(child.out().split("\n")[0]!) as { acked: number[] };
  const owner = child;
  const store = new FsSessionStore(home, undefined, undefined, {
    journal: true,
    beforeLogLock: async () => {
      await owner.kill();
      await loseUnsynced(0);
    },
  });
  const result = await store.retire("a", { archiveAfterMs: 0 }).finally(store.close);
  expect(result).toMatchObject({ archived: 1 });
  const first = result!.firstSeq;
  expect((await readAll()).map((e) => e.seq)).toEqual(acked.filter((seq) => seq >= first));
});
