// The log boundary's delta stream (redacting-log.ts) against the algorithm it replaced, which redacted each held
// tail joined whole to the next delta: on random secrets, texts and splits, what is written must be the same.
import { describe, expect, it } from "vitest";
import type { NewEvent } from "../protocol/events.js";
import { memoryLog } from "../testing/memory-log.js";
import { mulberry32 } from "../testing/rng.js";
import { Redactor } from "./redact.js";
import { redactingLog } from "./redacting-log.js";

/** Few characters, so texts are dense with secrets' starts; a quote and backslash (JSON forms), a non-BMP one. */
const SECRET_CHARS = ["a", "b", "c", "-", "1", '"', "\\", "é", "🔑"];
const TEXT_CHARS = [...SECRET_CHARS, " ", "x", "."];

/** The algorithm replaced: the held tail joined to the next delta, the join redacted and cut. */
function reference(redactor: Redactor, deltas: string[]): string[] {
  const out: string[] = [];
  let held: string | undefined;
  for (const delta of deltas) {
    const text = redactor.redact(held === undefined ? delta : held + delta);
    const hold = redactor.pendingTail(text);
    held = hold > 0 ? text.slice(text.length - hold) : undefined;
    if ((hold === 0 && text === delta) || text.length > hold) out.push(text.slice(0, text.length - hold));
  }
  if (held !== undefined) out.push(held);
  return out;
}

function generate(next: () => number) {
  const pick = <T>(items: T[]) => items[Math.floor(next() * items.length)]!;
  const word = (chars: string[], min: number, max: number) => {
    let out = "";
    const length = min + Math.floor(next() * (max - min + 1));
    while (out.length < length) out += pick(chars);
    return out;
  };
  const secrets = Array.from({ length: 1 + Math.floor(next() * 3) }, () => word(SECRET_CHARS, 8, 16));
  // A secret inside another, sometimes: the longer one is replaced whole.
  if (next() < 0.3) secrets.push(`${pick(secrets)}${word(SECRET_CHARS, 1, 4)}`);
  let text = "";
  const length = Math.floor(next() * 120);
  while (text.length < length) {
    const roll = next();
    if (roll < 0.15) text += pick(secrets);
    else if (roll < 0.25) text += JSON.stringify(pick(secrets)).slice(1, -1);
    else if (roll < 0.35) text += pick(secrets).slice(0, 1 + Math.floor(next() * 10));
    else text += word(TEXT_CHARS, 1, 6);
  }
  const cuts = [0, text.length];
  for (let i = Math.floor(next() * 12); i > 0; i--) cuts.push(Math.floor(next() * (text.length + 1)));
  cuts.sort((a, b) => a - b);
  const deltas = cuts.slice(1).map((end, i) => text.slice(cuts[i], end));
  return { secrets: secrets.map((value, i) => ({ name: `S${i}`, value })), deltas };
}

describe("the delta stream", () => {
  it("writes what redacting each held tail joined whole to the next delta wrote, on any secrets and split", async () => {
    for (let seed = 1; seed <= 2000; seed++) {
      const { secrets, deltas } = generate(mulberry32(seed));
      const redactor = new Redactor(secrets);
      const inner = memoryLog();
      const log = redactingLog(inner, redactor);
      // One append per delta, or several deltas in one (a runner's stdout chunk): the same either way.
      if (seed % 2) for (const delta of deltas) await log.append([deltaEvent(delta)]);
      else await log.append(deltas.map(deltaEvent));
      await log.close();
      const written = inner.stored.map((e) => (e.data as { text: string }).text);
      expect({ seed, written }).toEqual({ seed, written: reference(redactor, deltas) });
    }
  });
});

const deltaEvent = (text: string): NewEvent => ({ type: "assistant.delta", turn: "t", data: { text } });
