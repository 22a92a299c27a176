// The fuzzers' common parts: a seeded PRNG (a failure names its seed and input, so it reproduces), the
// committed corpus (test/faults/corpus/), and mutators that turn a corpus line into a near-miss. Bounded for CI:
// FAULTS_FUZZ_ITERATIONS (default 4000 per codec) and FAULTS_SEED (default 14) change the run.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { mulberry32 } from "../../src/testing/rng.js";

export const SEED = Number(process.env.FAULTS_SEED ?? 14);
export const ITERATIONS = Number(process.env.FAULTS_FUZZ_ITERATIONS ?? 4_000);

/** Seeded draws (mulberry32, src/testing/rng.ts) with the helpers the fuzzers use. */
export class Prng {
  private readonly draw: () => number;
  constructor(seed: number) {
    this.draw = mulberry32(seed);
  }
  next(): number {
    return this.draw();
  }
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)]!;
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
}

export function corpus(name: string): string[] {
  return readFileSync(join(import.meta.dirname, "corpus", name), "utf8")
    .split("\n")
    .filter(Boolean);
}

/** Field names the protocols use, and a few that trip careless code. */
const KEYS = [
  "attachment",
  "turn",
  "id",
  "event",
  "method",
  "params",
  "data",
  "result",
  "error",
  "text",
  "code",
  "message",
  "content",
  "type",
  "is_error",
  "arguments",
  "name",
  "usage",
  "stop_reason",
  "jsonrpc",
  "toString",
  "valueOf",
  "__proto__",
  "constructor",
  "extra",
  "",
];
const STRINGS = [
  "",
  "a1",
  "t1",
  "assistant.delta",
  "assistant.message",
  "tool.call",
  "open",
  "prompt",
  "interrupt",
  "checkpoint",
  "detach",
  "steer",
  "harness.warning",
  "brain_error",
  "provider_error",
  "text",
  "done",
  "error",
  "\u2028",
  "\u0000",
  "\ud800",
  "😀",
  "x".repeat(300),
  "1e3",
  "__proto__",
  "null",
];
const NUMBERS = [0, -1, 1, 1.5, 2 ** 53, -(2 ** 31), 1e308, -0];

/** A random JSON value, at most `depth` deep. */
export function randomValue(rng: Prng, depth = 3): unknown {
  const kind = rng.int(depth > 0 ? 9 : 6);
  switch (kind) {
    case 0:
      return null;
    case 1:
      return rng.chance(0.5);
    case 2:
      return rng.pick(NUMBERS);
    case 3:
    case 4:
      return rng.pick(STRINGS);
    case 5:
      return rng.chance(0.5) ? {} : [];
    case 6:
      return { toString: rng.pick([1, "x", null, {}]) };
    case 7:
      return Array.from({ length: rng.int(3) + 1 }, () => randomValue(rng, depth - 1));
    default: {
      const out: Record<string, unknown> = {};
      for (let i = rng.int(4); i > 0; i--) define(out, rng.pick(KEYS), randomValue(rng, depth - 1));
      return out;
    }
  }
}

/** Sets an own property, "__proto__" included (as JSON.parse would), so it serializes. */
function define(obj: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
}

type Json = Record<string, unknown> | unknown[];

/** One structural change somewhere in a parsed value: drop, add or replace a field, or rename a tag. */
function mutateValue(rng: Prng, value: unknown): unknown {
  if (value === null || typeof value !== "object") return rng.chance(0.5) ? randomValue(rng) : value;
  const node = value as Json;
  const keys = Object.keys(node);
  // Go deeper half the time, when there is somewhere to go.
  if (keys.length && rng.chance(0.5)) {
    const key = rng.pick(keys);
    const child = (node as Record<string, unknown>)[key];
    if (child !== null && typeof child === "object") {
      define(node as Record<string, unknown>, key, mutateValue(rng, child));
      return node;
    }
  }
  const op = rng.int(4);
  if (op === 0 && keys.length) {
    if (Array.isArray(node)) node.splice(rng.int(node.length), 1);
    else delete (node as Record<string, unknown>)[rng.pick(keys)];
  } else if (op === 1) {
    if (Array.isArray(node)) node.push(randomValue(rng));
    else define(node, rng.pick(KEYS), randomValue(rng));
  } else if (op === 2 && keys.length) {
    const key = rng.pick(keys);
    define(node as Record<string, unknown>, key, randomValue(rng));
  } else if (keys.length) {
    const key = rng.pick(keys);
    define(node as Record<string, unknown>, key, rng.pick(STRINGS));
  }
  return node;
}

/** A near-miss of `line`: a structural mutation, or a textual one (cut, insert, duplicate a key). */
export function mutate(rng: Prng, line: string): string {
  if (rng.chance(0.7)) {
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      return line;
    }
    for (let n = rng.int(3) + 1; n > 0; n--) value = mutateValue(rng, value);
    return JSON.stringify(value);
  }
  const at = rng.int(line.length + 1);
  switch (rng.int(4)) {
    case 0:
      return line.slice(0, at);
    case 1:
      return `${line.slice(0, at)}${rng.pick(["\\", '"', "}", "{", ",", "\u2028", "\u0000", "\ud800", " "])}${line.slice(at)}`;
    case 2:
      return line.replace("{", `{${JSON.stringify(rng.pick(KEYS))}:${JSON.stringify(randomValue(rng, 1))},`);
    default:
      return `${line.slice(0, at)}${line.slice(at + 1 + rng.int(8))}`;
  }
}

/** Each iteration's input: corpus lines first as they are, then mutants and random values. */
export function* inputs(rng: Prng, seeds: string[], n = ITERATIONS): Generator<string> {
  yield* seeds;
  for (let i = 0; i < n; i++) {
    if (rng.chance(0.1)) yield JSON.stringify(randomValue(rng, 4));
    else yield mutate(rng, rng.pick(seeds));
  }
}

/** Splits `text` into 1..8 random chunks (bytes), the way a pipe or socket may deliver it. */
export function chunks(rng: Prng, bytes: Buffer): Buffer[] {
  const cuts = new Set<number>();
  for (let n = rng.int(8); n > 0; n--) cuts.add(rng.int(bytes.length + 1));
  const sorted = [0, ...[...cuts].sort((a, b) => a - b), bytes.length];
  const out: Buffer[] = [];
  for (let i = 1; i < sorted.length; i++) out.push(bytes.subarray(sorted[i - 1]!, sorted[i]!));
  return out;
}

/** How a failure is reported: enough to rerun it. */
export function repro(what: string, input: string): string {
  return `${what} (FAULTS_SEED=${SEED}): ${JSON.stringify(input).slice(0, 400)}`;
}
