// A turn's last commit holds several lines (its last deltas, its message, its turn.settled): a crash that tears
// it anywhere leaves a log that opens to the commits before it and a prefix of its lines, never more.
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import type { NewEvent } from "../../protocol/events.js";
import { JsonlEventLog } from "./jsonl-log.js";

let dir: string;
let file: string;

beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), "brain-torn-"));
  file = path.join(dir, "events.jsonl");
});

afterEach(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

const delta = (text: string): NewEvent => ({ type: "assistant.delta", turn: "t1", data: { text } });

it("a torn last commit of deltas, message and turn.settled opens to a prefix of its events", async () => {
  const log = await JsonlEventLog.open(file, "s1");
  const before = await log.append([{ type: "turn.started", turn: "t1", data: {} }, delta("a"), delta("b")]);
  const start = (await fs.stat(file)).size;
  const last = await log.append([
    delta("c"),
    delta("d"),
    { type: "assistant.message", turn: "t1", data: { text: "abcd", stop_reason: "stop" } },
    { type: "turn.settled", turn: "t1", data: { status: "completed" } },
  ]);
  await log.close();
  const whole = await fs.readFile(file);
  const all = [...before, ...last];
  for (let cut = start; cut < whole.length; cut++) {
    await fs.writeFile(file, whole.subarray(0, cut));
    await fs.rm(`${file}.state`, { force: true });
    const reopened = await JsonlEventLog.open(file, "s1");
    const events = await reopened.read(0);
    await reopened.close();
    expect(events.length).toBeGreaterThanOrEqual(before.length);
    expect(events.length).toBeLessThan(all.length);
    expect(events.map(({ seq, type, data }) => ({ seq, type, data }))).toEqual(
      all.slice(0, events.length).map(({ seq, type, data }) => ({ seq, type, data })),
    );
  }
});
