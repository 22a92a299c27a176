// The log boundary's held delta tail (redacting-log.ts): where it goes when its stream goes quiet, when a write
// fails, and when the log closes: written once, in its place, redacted, and never after a gap.
import { describe, expect, it } from "vitest";
import type { NewEvent, SessionEvent } from "../protocol/events.js";
import type { EventLog } from "./event-log.js";
import { Redactor } from "./redact.js";
import { redactingLog } from "./redacting-log.js";

const KEY = "sk-test-0123456789abcdefSECRET";

/** An in-memory log whose appends fail while `failing` is set (a full disk): what a store would have written. */
function memoryLog(): EventLog & { stored: SessionEvent[]; failing: boolean } {
  const stored: SessionEvent[] = [];
  return {
    session: "s",
    stored,
    failing: false,
    get lastSeq() {
      return stored.length;
    },
    async append(events: NewEvent[]) {
      if (this.failing) throw new Error("ENOSPC: no space left on device");
      const out = events.map(
        (e, i) => ({ ...e, seq: stored.length + i + 1, ts: "t", session: "s" }) as SessionEvent,
      );
      stored.push(...out);
      return out;
    },
    async read(after: number) {
      return stored.filter((e) => e.seq > after);
    },
    subscribe: () => () => {},
    async close() {},
  };
}

const shown = (log: { stored: SessionEvent[] }) =>
  log.stored.map((e) => (e.type === "assistant.delta" ? e.data.text : e.type)).join("|");

const delta = (text: string): NewEvent => ({ type: "assistant.delta", turn: "t", data: { text } });
const settled: NewEvent = { type: "turn.settled", turn: "t", data: { status: "failed" } } as NewEvent;

describe("a held delta tail", () => {
  it("of a write that failed is not written later, after the gap, with the turn's close-out", async () => {
    const inner = memoryLog();
    const log = redactingLog(inner, new Redactor([{ name: "K", value: KEY }]));
    await log.append([delta("written. ")]);
    inner.failing = true;
    await expect(log.append([delta("lost, ending sk-")])).rejects.toThrow("ENOSPC");
    inner.failing = false;
    await log.append([settled]);
    expect(shown(inner)).toBe("written. |turn.settled");
  });
});
