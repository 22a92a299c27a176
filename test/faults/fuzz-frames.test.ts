// Fuzzing the runner protocol's NDJSON decoding (src/protocol/ndjson.ts + frames.ts), differential against the
// published JSON Schemas in schema/: a line is accepted exactly when JSON.parse gives a value the schema
// accepts, and the decoder never throws anything but its ProtocolError. The line splitter gives the same
// lines however the bytes are chunked, and throws only its FramingError.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Ajv2020 } from "ajv/dist/2020.js";
import { beforeAll, describe, expect, it } from "vitest";
import { decodeBrainFrame, decodeRunnerFrame, ProtocolError } from "../../src/protocol/frames.js";
import { FramingError, LineSplitter } from "../../src/protocol/ndjson.js";
import { chunks, corpus, inputs, Prng, repro, SEED } from "./fuzz.js";

const ajv = new Ajv2020({ strict: false });
const schema = (file: string) =>
  ajv.compile(JSON.parse(readFileSync(join(import.meta.dirname, "../../schema", file), "utf8")));

interface Findings {
  runs: number;
  accepted: number;
  /** Lines decoder and schema disagree on. */
  disagreements: string[];
  /** Lines the decoder answered with something other than its ProtocolError. */
  crashes: string[];
}

function differential(decode: (line: string) => unknown, schemaFile: string, seeds: string[]): Findings {
  const valid = schema(schemaFile);
  const rng = new Prng(SEED);
  const found: Findings = { runs: 0, accepted: 0, disagreements: [], crashes: [] };
  for (const line of inputs(rng, seeds)) {
    found.runs++;
    let decoded = false;
    try {
      decode(line);
      decoded = true;
    } catch (err) {
      if (!(err instanceof ProtocolError)) {
        found.crashes.push(repro(`${(err as Error).name}: ${(err as Error).message}`, line));
        continue;
      }
    }
    let value: unknown;
    let parses = true;
    try {
      value = JSON.parse(line);
    } catch {
      parses = false;
    }
    const schemaSays = parses && valid(value);
    if (decoded) found.accepted++;
    if (decoded !== schemaSays)
      found.disagreements.push(repro(`decoder ${decoded ? "accepts" : "refuses"}, schema disagrees`, line));
  }
  return found;
}

const sides = [
  ["runner-to-brain", decodeRunnerFrame, "runner-to-brain.json", "runner-to-brain.ndjson"],
  ["brain-to-runner", decodeBrainFrame, "brain-to-runner.json", "brain-to-runner.ndjson"],
] as const;

describe.each(sides)("fuzz: %s frames", (_side, decode, schemaFile, seedFile) => {
  let found: Findings;
  beforeAll(() => {
    found = differential(decode, schemaFile, corpus(seedFile));
  });

  describe("fuzz: NDJSON frames, decoder = schema", () => {
    it(`codec (${_side})`, () => {
      expect(found.disagreements.slice(0, 5)).toEqual([]);
      // The run must have reached both sides of the decision, or it proved nothing.
      expect(found.accepted).toBeGreaterThan(found.runs / 50);
      expect(found.runs - found.accepted).toBeGreaterThan(found.runs / 50);
    });
  });

  describe("fuzz: NDJSON frames, only ProtocolError", () => {
    it(`codec (${_side})`, () => {
      expect(found.crashes.slice(0, 5)).toEqual([]);
    });
  });
});

describe("fuzz: NDJSON line splitting", () => {
  it("codec", () => {
    const rng = new Prng(SEED);
    const lines = [...corpus("runner-to-brain.ndjson"), ...corpus("brain-to-runner.ndjson")];
    for (let i = 0; i < 1_500; i++) {
      const picked = Array.from({ length: rng.int(5) + 1 }, () => rng.pick(lines));
      const max = rng.chance(0.2) ? 64 : 1 << 20;
      const text = picked.join("\n") + (rng.chance(0.8) ? "\n" : "");
      const got: string[] = [];
      const splitter = new LineSplitter((line) => got.push(line), max);
      let error: unknown;
      try {
        for (const chunk of chunks(rng, Buffer.from(text, "utf8"))) splitter.push(chunk);
        splitter.end();
      } catch (err) {
        error = err;
      }
      const whole = text.split("\n");
      const complete = text.endsWith("\n") ? whole.slice(0, -1) : whole.slice(0, -1);
      if (error !== undefined) {
        expect(error, repro("splitter threw", text)).toBeInstanceOf(FramingError);
        // Everything before the failing line came through intact.
        expect(complete.slice(0, got.length)).toEqual(got);
        continue;
      }
      expect(got, repro("splitter lines", text)).toEqual(complete);
    }
  });
});
