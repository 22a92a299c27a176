// The log boundary's held delta tail (redacting-log.ts): where it goes when its stream goes quiet, when a write
// fails, and when the log closes: written once, in its place, redacted, and never after a gap.
import { describe, expect, it } from "vitest";
import type { NewEvent, SessionEvent } from "../protocol/events.js";
import { memoryLog } from "../testing/memory-log.js";
import { Redactor } from "./redact.js";
import { redactingLog } from "./redacting-log.js";

const KEY = "sk-test-0123456789abcdefSECRET";

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
