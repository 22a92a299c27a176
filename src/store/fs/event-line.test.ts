import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { NewEvent } from "../../protocol/events.js";
import { decodeRunnerFrameFast, verbatimDataJson } from "../../protocol/fast-frames.js";
import { eventLineTail } from "./event-line.js";
import { JsonlEventLog } from "./jsonl-log.js";

const TS = "2026-01-02T03:04:05.678Z";

function deltaEvent(text: string): NewEvent {
  const frame = decodeRunnerFrameFast(
    `{"attachment":"a","turn":"t-1","event":"assistant.delta","data":{"text":"${text}"}}`,
  );
  if (!frame || !("event" in frame)) throw new Error("not decoded");
  return { type: frame.event, turn: frame.turn, data: frame.data } as NewEvent;
}

const serialised = (e: NewEvent) =>
  JSON.stringify({ ts: TS, session: "s", turn: e.turn, type: e.type, data: e.data }).slice(1);

describe("event log lines from the frame's own bytes", () => {
  it("writes a plain delta's line byte for byte as JSON.stringify would", () => {
    const e = deltaEvent("Hello, wörld 😀");
    expect(verbatimDataJson(e.data)).toBeDefined();
    expect(eventLineTail(TS, "s", e)).toBe(serialised(e));
    const noTurn = { type: e.type, data: e.data } as NewEvent;
    expect(eventLineTail(TS, "s", noTurn)).toBe(serialised(noTurn));
  });

  it("serialises a delta whose text the runner escaped", () => {
    const e = deltaEvent('\\u0041\\/\\"\\ud800\\n');
    expect(verbatimDataJson(e.data)).toBeUndefined();
    expect(eventLineTail(TS, "s", e)).toBe(serialised(e));
  });

  it("reads back from the log the very events it was given", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "event-line-"));
    try {
      const file = path.join(dir, "events.jsonl");
      const log = await JsonlEventLog.open(file, "s");
      const events = [deltaEvent("a"), deltaEvent("\\u00e9\\t"), deltaEvent("")];
      const stored = await log.append(events);
      expect(await log.read(0)).toEqual(stored);
      await log.close();
      const reopened = await JsonlEventLog.open(file, "s");
      expect((await reopened.read(0)).map((e) => e.data)).toEqual([
        { text: "a" },
        { text: "é\t" },
        { text: "" },
      ]);
      await reopened.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
