// `brain sessions`, `brain checkpoint`, `brain restore`, `brain fork`.
import { resolve } from "node:path";
import type { Brain } from "../core/brain.js";
import { PendingRequests } from "../core/pending.js";
import type { SessionEvent } from "../protocol/events.js";
import { FsSessionStore, readEventsFile } from "../store/fs/index.js";
import { brainHome } from "./setup.js";

export async function sessionsCommand(
  brain: Brain,
  args: string[],
  options: { after: number; json: boolean },
): Promise<number> {
  const [verb = "ls", id] = args;
  const store = new FsSessionStore(brainHome());
  switch (verb) {
    case "ls": {
      const records = await brain.list();
      if (options.json) {
        for (const record of records) process.stdout.write(`${JSON.stringify(record)}\n`);
        return 0;
      }
      for (const r of records)
        process.stdout.write(`${r.id}  ${r.harness.padEnd(12)} ${r.status.padEnd(6)} ${r.created_at}\n`);
      if (records.length === 0) process.stderr.write('no sessions yet: try `brain run "hello"`\n');
      return 0;
    }
    case "show": {
      const record = await brain.record(required(id));
      const events = await readEventsFile(store.paths(record.id).events);
      process.stdout.write(`${JSON.stringify({ ...record, ...summarize(events) }, null, 2)}\n`);
      return 0;
    }
    case "events": {
      const record = await brain.record(required(id));
      const events = await readEventsFile(store.paths(record.id).events);
      for (const event of events)
        if (event.seq > options.after) process.stdout.write(`${JSON.stringify(event)}\n`);
      return 0;
    }
    default:
      throw new Error(`unknown sessions verb "${verb}": use ls, show ID or events ID`);
  }
}

function summarize(events: SessionEvent[]) {
  const pending = new PendingRequests();
  let turns = 0;
  let lastTurn: { turn?: string; status?: string } | undefined;
  const checkpoints: string[] = [];
  for (const event of events) {
    pending.observe(event);
    if (event.type === "turn.started") {
      turns += 1;
      lastTurn = { turn: event.turn, status: "running" };
    }
    if (event.type === "turn.settled") lastTurn = { turn: event.turn, status: event.data.status };
    if (event.type === "checkpoint.created") checkpoints.push(event.data.id);
  }
  return { events: events.length, turns, last_turn: lastTurn, checkpoints, pending: pending.list() };
}

function required(id: string | undefined): string {
  if (!id) throw new Error("give a session ID (see `brain sessions ls`)");
  return id;
}

export async function checkpointCommand(brain: Brain, id: string): Promise<number> {
  const session = await brain.session(id);
  const manifest = await session.checkpoint();
  process.stdout.write(`checkpoint ${manifest.id} of session ${id}\n`);
  for (const file of manifest.files) {
    process.stdout.write(`  ${file.path}  ${file.size} bytes${file.append_only ? "  (append-only)" : ""}\n`);
  }
  return 0;
}

export async function restoreCommand(
  brain: Brain,
  id: string,
  checkpoint: string,
  into: string,
): Promise<number> {
  const dir = resolve(into);
  await brain.restore(id, checkpoint, dir);
  process.stdout.write(`restored checkpoint ${checkpoint} of session ${id} into ${dir}\n`);
  return 0;
}

export async function forkCommand(brain: Brain, id: string, checkpoint: string): Promise<number> {
  const session = await brain.fork(id, checkpoint);
  process.stdout.write(`${session.id}\n`);
  process.stderr.write(`forked session ${id} (checkpoint ${checkpoint}) into new session ${session.id}\n`);
  return 0;
}
