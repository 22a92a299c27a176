// Each line of a commit names its own event's turn: a commit's events are laid out with the turn's member made
// once per run of one turn (log-batch layout), so a commit that switches turns, or holds events of none, must not
// carry one event's turn onto the next.
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import type { NewEvent } from "../../protocol/events.js";
import { JsonlEventLog, readEventsFile } from "./jsonl-log.js";

let dir: string;
beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), "brain-line-turns-"));
});
afterEach(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

it("keeps every event's own turn (or none) through one commit that mixes them", async () => {
  const file = path.join(dir, "events.jsonl");
  const log = await JsonlEventLog.open(file, "s1");
  const call = (turn: string | undefined, id: string): NewEvent =>
    ({
      type: "tool.call",
      ...(turn === undefined ? {} : { turn }),
      data: { id, name: "echo", arguments: { value: id } },
    }) as NewEvent;
  const events: NewEvent[] = [
    call("t1", "a"),
    call("t1", "b"),
    { type: "user.prompt", data: { text: "no turn" } },
    call("t2", "c"),
    { type: "assistant.delta", turn: "t2", data: { text: "d" } },
    call(undefined, "e"),
    call('t"quoted"', "f"),
    call("t1", "g"),
  ];
  // Appended in one tick: one commit, laid out together.
  const appended = (await Promise.all(events.map((e) => log.append([e])))).flat();
  await log.close();
  const stored = await readEventsFile(file);
  expect(stored).toEqual(appended);
  expect(stored.map((e) => e.turn)).toEqual([
    "t1",
    "t1",
    undefined,
    "t2",
    "t2",
    undefined,
    't"quoted"',
    "t1",
  ]);
  expect(stored.map((e) => ("turn" in e ? "has" : "none"))).toEqual(
    events.map((e) => (e.turn === undefined ? "none" : "has")),
  );
});
