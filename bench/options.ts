// Command-line options shared by every benchmark.
export interface BenchOptions {
  quick: boolean;
  /** Interleaved rounds per comparison. */
  reps: number;
}
