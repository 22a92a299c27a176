import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { NewEvent } from "../../protocol/events.js";
import { decodeRunnerFrameFast, verbatimText } from "../../protocol/fast-frames.js";
import { LineTails } from "./event-line.js";
import { JsonlEventLog } from "./jsonl-log.js";

const TS = "2026-01-02T03:04:05.678Z";

function deltaEvent(text: string, turn = "t-1"): NewEvent {
  const frame = decodeRunnerFrameFast(
    `{"attachment":"a","turn":${JSON.stringify(turn)},"event":"assistant.delta","data":{"text":"${text}"}}`,
  );
  if (!("event" in frame)) throw new Error("not decoded");
  return { type: frame.event, turn: frame.turn, data: frame.data } as NewEvent;
}

const serialised = (e: NewEvent, ts = TS, session = "s") =>
  JSON.stringify({ ts, session, turn: e.turn, type: e.type, data: e.data }).slice(1);

describe("event log lines", () => {
  it("writes a verbatim delta's line byte for byte as JSON.stringify would, and counts its bytes", () => {
    const lines = new LineTails('s "quoted"');
    const cases: [string, NewEvent][] = [
      [TS, deltaEvent("Hello, wörld 😀")],
      [TS, deltaEvent("again")],
      [TS, deltaEvent("other turn", 'turn "2"')],
      ["2026-01-02T03:04:05.679Z", deltaEvent("a later millisecond")],
      [TS, { type: "assistant.delta", data: deltaEvent("no turn").data } as NewEvent],
      [TS, deltaEvent("")],
    ];
    for (const [ts, e] of cases) {
      expect(verbatimText(e.data)).toBeDefined();
      const tail = lines.tail(ts, e);
      expect(tail).toBe(serialised(e, ts, 's "quoted"'));
      expect(lines.bytes).toBe(Buffer.byteLength(tail));
    }
  });

  it("serialises a delta whose text the runner escaped, and any other event", () => {
    const lines = new LineTails("s");
    const escaped = deltaEvent('\\u0041\\/\\"\\ud800\\n');
    expect(verbatimText(escaped.data)).toBeUndefined();
    const other: NewEvent = { type: "turn.settled", turn: "t", data: { status: "completed" } };
    for (const e of [escaped, other, deltaEvent("x"), escaped]) {
      const tail = lines.tail(TS, e);
      expect(tail).toBe(serialised(e));
      expect(lines.bytes).toBe(Buffer.byteLength(tail));
    }
  });

  it("reads back from the log the very events it was given", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "event-line-"));
    try {
      const file = path.join(dir, "events.jsonl");
      const log = await JsonlEventLog.open(file, "s");
      const events = [deltaEvent("a"), deltaEvent("\\u00e9\\t"), deltaEvent("ü 😀")];
      const stored = await log.append(events);
      expect(await log.read(0)).toEqual(stored);
      await log.close();
      const reopened = await JsonlEventLog.open(file, "s");
      expect((await reopened.read(0)).map((e) => e.data)).toEqual([
        { text: "a" },
        { text: "é\t" },
        { text: "ü 😀" },
      ]);
      await reopened.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
