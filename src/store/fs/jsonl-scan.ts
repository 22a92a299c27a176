// Scanning events.jsonl line by line: byte offsets per seq, the torn tail a crash mid-write leaves, and
// corruption anywhere else (which is a real error: silently dropping durable events would lose history).
import type { SessionEvent } from "../../protocol/events.js";
import { StoreError } from "./errors.js";
import { type LogIO, readFully } from "./log-io.js";

const CHUNK = 1 << 20;
const NL = 0x0a;

export interface ScanResult {
  /** offsets[i] is the byte offset of the line holding seq i + 1. */
  offsets: number[];
  /** Byte length of the valid prefix: everything after it is a torn tail. */
  end: number;
  /** The events themselves, when asked for. */
  events: SessionEvent[];
}

type Parsed = { event: SessionEvent } | { reason: string };

export function parseLine(text: string): Parsed {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { reason: `not valid JSON (${(err as Error).message})` };
  }
  if (value === null || typeof value !== "object" || Array.isArray(value))
    return { reason: "not a JSON object" };
  const v = value as Record<string, unknown>;
  if (typeof v.seq !== "number" || typeof v.type !== "string")
    return { reason: "not an event (no seq or type)" };
  return { event: v as unknown as SessionEvent };
}

export function corrupt(path: string, line: number, reason: string): StoreError {
  return new StoreError("brain_error", `event log ${path}: line ${line}: ${reason}`);
}

/** Reads `size` bytes of the log from the start. Throws on corruption before the last line. */
export async function scanLog(
  io: LogIO,
  fd: number,
  size: number,
  path: string,
  keepEvents: boolean,
): Promise<ScanResult> {
  const offsets: number[] = [];
  const events: SessionEvent[] = [];
  let end = 0;
  let line = 0;
  // A bad complete line is held back: it is a torn tail if nothing follows it, corruption otherwise.
  let bad: { line: number; reason: string } | undefined;
  let carry: Buffer = Buffer.alloc(0);
  let carryAt = 0; // file offset of carry[0]
  let pos = 0;
  while (pos < size) {
    const chunk = await readFully(io, fd, pos, Math.min(CHUNK, size - pos));
    if (chunk.length === 0) break;
    pos += chunk.length;
    const buf = carry.length > 0 ? Buffer.concat([carry, chunk]) : chunk;
    let start = 0;
    for (let nl = buf.indexOf(NL, start); nl >= 0; nl = buf.indexOf(NL, start)) {
      if (bad) throw corrupt(path, bad.line, bad.reason);
      line++;
      const parsed = parseLine(buf.toString("utf8", start, nl));
      if ("reason" in parsed) {
        bad = { line, reason: parsed.reason };
      } else if (parsed.event.seq !== line) {
        throw corrupt(path, line, `seq ${parsed.event.seq} where ${line} was expected`);
      } else {
        offsets.push(carryAt + start);
        if (keepEvents) events.push(parsed.event);
        end = carryAt + nl + 1;
      }
      start = nl + 1;
    }
    carry = buf.subarray(start);
    carryAt += start;
  }
  if (bad && carry.length > 0) throw corrupt(path, bad.line, bad.reason);
  return { offsets, end, events };
}
