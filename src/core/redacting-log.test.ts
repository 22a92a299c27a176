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

describe("a held delta tail of a stream gone quiet", () => {
  /** Waits (up to 10 s: the release is HELD_IDLE_MS after the last delta, more on a loaded machine) for `shown`. */
  async function eventually(inner: { stored: SessionEvent[] }, want: string): Promise<string> {
    for (let i = 0; i < 200 && shown(inner) !== want; i++) await new Promise((r) => setTimeout(r, 50));
    return shown(inner);
  }

  it("goes out once no delta came for a while: a last word before a long wait is not held back all that time", async () => {
    const inner = memoryLog();
    const log = redactingLog(inner, new Redactor([{ name: "K", value: KEY }]));
    // "sk-" could start the key: held back, then written once the stream is quiet, in its place and once.
    await log.append([delta("working, ending sk-")]);
    expect(shown(inner)).toBe("working, ending ");
    expect(await eventually(inner, "working, ending |sk-")).toBe("working, ending |sk-");
    await log.append([delta("more"), settled]);
    expect(shown(inner).replaceAll("|", "")).toBe("working, ending sk-moreturn.settled");
    await log.close();
  });

  it("still catches a secret split over deltas that keep coming", async () => {
    const inner = memoryLog();
    const log = redactingLog(inner, new Redactor([{ name: "K", value: KEY }]));
    for (let at = 0; at < KEY.length; at += 3) await log.append([delta(KEY.slice(at, at + 3))]);
    await log.append([settled]);
    expect(shown(inner).replaceAll("|", "")).toBe("[redacted:K]turn.settled");
    await log.close();
  });
});
