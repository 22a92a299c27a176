// Order statistics and number formatting for the bench table.

export interface Summary {
  n: number;
  median: number;
  min: number;
  max: number;
  /** Nearest-rank p99: with fewer than 100 values this is the maximum. */
  p99: number;
}

/** Nearest-rank quantile of an already sorted array (q in [0, 1]). */
function rank(sorted: number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[i]!;
}

export function median(values: number[]): number {
  if (values.length === 0) return Number.NaN;
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

export function summarize(values: number[]): Summary {
  const s = [...values].sort((a, b) => a - b);
  return {
    n: s.length,
    median: median(s),
    min: s[0] ?? Number.NaN,
    max: s.at(-1) ?? Number.NaN,
    p99: rank(s, 0.99),
  };
}

/** 1234567 → "1.23 M", 45600 → "45.6 k", 812 → "812". */
export function fmtCount(v: number): string {
  if (!Number.isFinite(v)) return "n/a";
  const abs = Math.abs(v);
  if (abs >= 1e6) return `${(v / 1e6).toFixed(2)} M`;
  if (abs >= 1e4) return `${(v / 1e3).toFixed(1)} k`;
  if (abs >= 1e3) return `${(v / 1e3).toFixed(2)} k`;
  return abs >= 100 ? v.toFixed(0) : v.toPrecision(3);
}

export function fmtMs(v: number): string {
  if (!Number.isFinite(v)) return "n/a";
  if (v >= 100) return `${v.toFixed(0)} ms`;
  if (v >= 10) return `${v.toFixed(1)} ms`;
  return `${v.toFixed(2)} ms`;
}

export function fmtPct(ratio: number): string {
  return Number.isFinite(ratio) ? `${(ratio * 100).toFixed(0)} %` : "n/a";
}

/** "median (min – max)" with the given number formatter. */
export function fmtSummary(s: Summary, fmt: (v: number) => string): string {
  if (s.n === 0) return "n/a";
  if (s.n === 1) return fmt(s.median);
  return `${fmt(s.median)} (${fmt(s.min)} – ${fmt(s.max)})`;
}
