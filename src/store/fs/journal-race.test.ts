// A journal (journal.ts) of a process that died while another store on the home runs: its replay must come
// before any open of a log it holds records for, whichever store opens it.
import { spawn } from "node:child_process";
import { once } from "node:events";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { processStart } from "../../core/process-identity.js";
import type { NewEvent } from "../../protocol/events.js";
import { JOURNAL_SUFFIX } from "./journal.js";
import { replayJournals } from "./journal-replay.js";
import { nodeLogIO } from "./log-io.js";
import { acquireLogLock } from "./log-lock.js";
import { FsSessionStore } from "./session-store.js";

let home: string;
let crashed: string;

beforeEach(async () => {
  home = await fs.mkdtemp(path.join(os.tmpdir(), "brain-journal-race-"));
  crashed = await fs.mkdtemp(path.join(os.tmpdir(), "brain-journal-race-crash-"));
});

afterEach(async () => {
  await fs.rm(home, { recursive: true, force: true });
  await fs.rm(crashed, { recursive: true, force: true });
});

const base = { harness: "process", config: { model: "m1" } };
const delta = (text: string): NewEvent => ({ type: "assistant.delta", turn: "t1", data: { text } });

it("an open replays a journal whose process died after the store started (it was locked then)", async () => {
  // Two sessions written through one journal, left open: the home copied as a crash leaves it, locks left out.
  const writer = new FsSessionStore(home, undefined, undefined, { journal: true });
  const ids: string[] = [];
  const acked: number[][] = [];
  for (const name of ["a", "b"]) {
    const { id } = await writer.create(base);
    const log = await writer.openLog(id);
    const events = [...(await log.append([delta(`${name}1`)])), ...(await log.append([delta(`${name}2`)]))];
    ids.push(id);
    acked.push(events.map((e) => e.seq));
  }
  await fs.cp(home, crashed, { recursive: true, filter: (src) => !src.endsWith(".lock") });
  // The crash took the second log's unsynced bytes: only the journal holds its events.
  const second = path.join(crashed, "sessions", ids[1]!, "events.jsonl");
  await fs.writeFile(second, (await fs.readFile(second)).subarray(0, 30));
  await fs.rm(`${second}.state`, { force: true });
  const [journal] = (await fs.readdir(path.join(crashed, "journal"))).filter((n) =>
    n.endsWith(JOURNAL_SUFFIX),
  );
  // A process replaying the journal holds its lock as the store starts (and opens the first log), then dies.
  const replayer = await acquireLogLock(path.join(crashed, "journal", journal!), { session: "journal" });
  const store = new FsSessionStore(crashed, undefined, undefined, { journal: true });
  await (await store.openLog(ids[0]!)).close();
  await replayer.release();
  const log = await store.openLog(ids[1]!);
  expect((await log.read(0)).map((e) => e.seq)).toEqual(acked[1]);
  await log.close();
  await store.close();
  await writer.close();
});

it("an open does not wait for the home's replay lock over a journal its own live process holds", async () => {
  // Another process journaling in the home: its journal named by its pid, locked by it.
  const other = spawn(process.execPath, ["-e", "setInterval(() => {}, 1 << 30)"], { stdio: "ignore" });
  try {
    await once(other, "spawn");
    const pid = other.pid!;
    const dir = path.join(home, "journal");
    const journal = path.join(dir, `${pid}-0123456789ab${JOURNAL_SUFFIX}`);
    await fs.mkdir(dir, { recursive: true });
    await fs.writeFile(journal, "");
    const lock = {
      kind: "process",
      pid,
      host: os.hostname(),
      start: processStart(pid),
      nonce: "0123456789abcdef",
    };
    await fs.writeFile(`${journal}.lock`, `${JSON.stringify(lock)}\n`);
    // A third process holds the replay lock (its open is checking the journals, or replaying a dead one).
    const replaying = await acquireLogLock(path.join(dir, "replay"), { session: "journal replay" });
    try {
      // Before, this waited until the replay lock was let go: every open of every log, one at a time.
      await replayJournals(dir, nodeLogIO);
    } finally {
      await replaying.release();
    }
    expect(await fs.readFile(journal, "utf8")).toBe(""); // not replayed: its process lives
  } finally {
    other.kill();
  }
});
