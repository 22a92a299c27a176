// The shared JSON-RPC line fixtures (fixtures/wire/jsonrpc-lines.json) as the chunks a reader is fed. Brain's
// decoder, the TypeScript nui SDK and the Python SDK read the same file, so they take the same lines.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

type Chunk = string | { hex: string } | { pad: { id: string; bytes: number; char: string } };

interface RawCase {
  name: string;
  in: Chunk[];
  answered: (string | number)[];
  ended: boolean;
}

export interface WireCase {
  name: string;
  chunks: Buffer[];
  /** The ids of the harness.info requests a reader takes, in order. */
  answered: (string | number)[];
  /** The reader ends the stream (a line over the cap) and reads nothing after it. */
  ended: boolean;
}

const FILE = fileURLToPath(new URL("./fixtures/wire/jsonrpc-lines.json", import.meta.url));

/** A harness.info line of exactly `bytes` UTF-8 bytes before its newline (sdk/python/tests builds it the same way). */
function paddedLine({ id, bytes, char }: { id: string; bytes: number; char: string }): Buffer {
  const line = (pad: string) =>
    JSON.stringify({ jsonrpc: "2.0", id, method: "harness.info", params: { pad } });
  const need = bytes - Buffer.byteLength(line(""));
  const each = Buffer.byteLength(char);
  const pad = char.repeat(Math.floor(need / each)) + "x".repeat(need % each);
  const out = Buffer.from(`${line(pad)}\n`);
  if (out.length !== bytes + 1) throw new Error(`padded line of ${out.length - 1} bytes, not ${bytes}`);
  return out;
}

function toBuffer(chunk: Chunk): Buffer {
  if (typeof chunk === "string") return Buffer.from(chunk);
  if ("hex" in chunk) return Buffer.from(chunk.hex, "hex");
  return paddedLine(chunk.pad);
}

export function wireCases(): WireCase[] {
  const { cases } = JSON.parse(readFileSync(FILE, "utf8")) as { cases: RawCase[] };
  return cases.map((c) => ({
    name: c.name,
    chunks: c.in.map(toBuffer),
    answered: c.answered,
    ended: c.ended,
  }));
}

export interface EventCase {
  name: string;
  /** What the agent yields, in order. */
  yields: Record<string, unknown>[];
  /** The events Brain reads (runId left out), done included; or undefined when `joined` is given. */
  sent?: Record<string, unknown>[];
  /** The text all text events make together, when the pieces are each SDK's own. */
  joined?: string;
}

const NUMBERS: Record<string, number> = { NaN: Number.NaN, Infinity: Infinity, "-Infinity": -Infinity };

/** The fixture's stand-ins made real: {$number} a number JSON cannot spell, {repeat, times, before?} a long text. */
function revive(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(revive);
  if (value === null || typeof value !== "object") return value;
  const o = value as Record<string, unknown>;
  if (typeof o.$number === "string") return NUMBERS[o.$number];
  if (typeof o.repeat === "string" && typeof o.times === "number") {
    const { repeat, times, before = "", ...rest } = o;
    const text = `${before}${repeat.repeat(times)}`;
    return rest.type === undefined ? text : { ...rest, content: text };
  }
  return Object.fromEntries(Object.entries(o).map(([k, v]) => [k, revive(v)]));
}

export function eventCases(): EventCase[] {
  const file = fileURLToPath(new URL("./fixtures/wire/events-out.json", import.meta.url));
  const { cases } = JSON.parse(readFileSync(file, "utf8")) as {
    cases: { name: string; yield: unknown[]; sent?: unknown[]; joined?: unknown }[];
  };
  return cases.map((c) => ({
    name: c.name,
    yields: revive(c.yield) as Record<string, unknown>[],
    sent: c.sent === undefined ? undefined : (revive(c.sent) as Record<string, unknown>[]),
    joined: c.joined === undefined ? undefined : (revive(c.joined) as string),
  }));
}

export interface FrameCase {
  name: string;
  line: string;
  /** What the decoder keeps of the line, or undefined when it refuses it. */
  kept?: unknown;
  /** Words the refusal's message holds. */
  refused?: string;
}

/** The runner stdio frames (fixtures/wire/runner-frames.json), each way. */
export function frameCases(): { fromRunner: FrameCase[]; toRunner: FrameCase[] } {
  const file = fileURLToPath(new URL("./fixtures/wire/runner-frames.json", import.meta.url));
  const raw = JSON.parse(readFileSync(file, "utf8")) as { from_runner: FrameCase[]; to_runner: FrameCase[] };
  return { fromRunner: raw.from_runner, toRunner: raw.to_runner };
}
