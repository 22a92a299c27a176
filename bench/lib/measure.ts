// Side-by-side measurement: baseline and subject runs alternate (B S, S B, B S, ...) so drift in the machine's
// speed hits both alike, and each pair gives one ratio. Every row carries the foreign load seen while it ran.
import { startProbe } from "./load.js";
import { type Summary, summarize } from "./stats.js";

export interface Sample {
  /** The measured figure: a rate (per second) or a time (ms), as the row's unit says. */
  value: number;
  /** Cores used by other processes during the timed part. */
  foreign: number;
  /** Diagnostics of this run (batch sizes, commits per round trip, ...). */
  extra?: Record<string, number>;
}

export type Target =
  | { kind: "min-ratio"; ratio: number }
  /** Lower is better: median(subject) / median(baseline) at most this. */
  | { kind: "max-ratio"; ratio: number }
  | { kind: "max"; value: number; of: "median" | "p99" }
  | { kind: "none" };

export interface BenchRow {
  id: string;
  what: string;
  unit: string;
  subject: Summary;
  baseline?: Summary;
  baselineWhat?: string;
  /** median(subject) / median(baseline). */
  ratio?: number;
  /** The ratio within each interleaved pair. */
  pairRatios?: Summary;
  target: Target;
  verdict: "PASS" | "FAIL" | "info";
  /** Other processes' CPU during the timed runs of this row, in cores. */
  foreign: Summary;
  /** Medians of each run's diagnostics. */
  extra: Record<string, number>;
  /** Every run's figure, in the order measured (pairs share an index). */
  samples: { subject: number[]; baseline?: number[] };
  notes: string[];
}

/** Times `fn` and the foreign load over exactly that interval. */
export async function timed<T>(
  fn: () => Promise<T>,
): Promise<{ seconds: number; foreign: number; result: T }> {
  const probe = startProbe();
  const t0 = process.hrtime.bigint();
  const result = await fn();
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  return { seconds, foreign: probe.stop(), result };
}

export function log(message: string): void {
  process.stderr.write(`${message}\n`);
}

/**
 * Runs `reps` rounds of every side, in the given order on even rounds and reversed on odd ones, so no side
 * always runs first (after the same neighbour). `warmRounds` untimed rounds of every side come first (their rep
 * is negative): for a bench that runs code the process has not run before, whose first rounds measure the JIT.
 */
export async function interleave<K extends string>(
  label: string,
  reps: number,
  sides: Record<K, (rep: number) => Promise<Sample>>,
  warmRounds = 0,
): Promise<Record<K, Sample[]>> {
  const keys = Object.keys(sides) as K[];
  const out = Object.fromEntries(keys.map((k) => [k, [] as Sample[]])) as Record<K, Sample[]>;
  for (let round = 0; round < warmRounds; round++) {
    for (const side of keys) await sides[side](-1 - round);
  }
  for (let rep = 0; rep < reps; rep++) {
    const order = rep % 2 === 0 ? keys : [...keys].reverse();
    for (const side of order) {
      const sample = await sides[side](rep);
      out[side].push(sample);
      const figure = sample.value.toPrecision(4).padStart(9);
      const foreign = Number.isFinite(sample.foreign) ? `${sample.foreign.toFixed(2)} cores` : "n/a";
      log(`  ${label} ${rep + 1}/${reps} ${side.padEnd(9)} ${figure}   foreign ${foreign}`);
    }
  }
  return out;
}

const values = (samples: Sample[]) => samples.map((s) => s.value);

/** The foreign load over these runs; runs too short to tell (NaN) are left out. */
const foreignLoad = (samples: Sample[]) =>
  summarize(samples.map((s) => s.foreign).filter((f) => Number.isFinite(f)));

function medianExtras(samples: Sample[]): Record<string, number> {
  const keys = new Set(samples.flatMap((s) => Object.keys(s.extra ?? {})));
  const out: Record<string, number> = {};
  for (const key of keys) {
    out[key] = summarize(
      samples.map((s) => s.extra?.[key]).filter((v): v is number => v !== undefined),
    ).median;
  }
  return out;
}

/** A row comparing two rates (higher is better): subject / baseline against a minimum ratio. */
export function rateRow(
  fields: { id: string; what: string; unit: string; baselineWhat: string; notes?: string[] },
  samples: { baseline: Sample[]; subject: Sample[] },
  target: Target,
): BenchRow {
  const subject = summarize(samples.subject.map((s) => s.value));
  const baseline = summarize(samples.baseline.map((s) => s.value));
  const ratio = subject.median / baseline.median;
  const pairs = samples.subject.map((s, i) => s.value / (samples.baseline[i]?.value ?? Number.NaN));
  const verdict = target.kind === "min-ratio" ? (ratio >= target.ratio ? "PASS" : "FAIL") : "info";
  return {
    ...fields,
    notes: fields.notes ?? [],
    subject,
    baseline,
    ratio,
    pairRatios: summarize(pairs),
    target,
    verdict,
    foreign: foreignLoad([...samples.subject, ...samples.baseline]),
    extra: medianExtras(samples.subject),
    samples: { subject: values(samples.subject), baseline: values(samples.baseline) },
  };
}

/** A row of times (lower is better) against an absolute maximum, with an optional baseline for context. */
export function timeRow(
  fields: { id: string; what: string; unit: string; baselineWhat?: string; notes?: string[] },
  samples: { baseline?: Sample[]; subject: Sample[] },
  target: Target,
): BenchRow {
  const subject = summarize(samples.subject.map((s) => s.value));
  const baseline = samples.baseline ? summarize(samples.baseline.map((s) => s.value)) : undefined;
  let verdict: BenchRow["verdict"] = "info";
  if (target.kind === "max") verdict = subject[target.of] <= target.value ? "PASS" : "FAIL";
  const ratio = baseline ? subject.median / baseline.median : undefined;
  if (target.kind === "max-ratio") verdict = ratio !== undefined && ratio <= target.ratio ? "PASS" : "FAIL";
  const pairs = samples.baseline
    ? samples.subject.map((s, i) => s.value / (samples.baseline?.[i]?.value ?? Number.NaN))
    : undefined;
  return {
    ...fields,
    notes: fields.notes ?? [],
    subject,
    ...(baseline ? { baseline, ratio, pairRatios: summarize(pairs ?? []) } : {}),
    target,
    verdict,
    foreign: foreignLoad([...samples.subject, ...(samples.baseline ?? [])]),
    extra: medianExtras(samples.subject),
    samples: {
      subject: values(samples.subject),
      ...(samples.baseline ? { baseline: values(samples.baseline) } : {}),
    },
  };
}
