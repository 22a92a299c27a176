// The sizes and delays an embedded event log (jsonl-log.ts) is tuned with, and why each is what it is.

/** Segments: small enough that retention frees space in useful steps, large enough that a log has few files. */
export const [DEFAULT_IDLE_MS, SEGMENT_BYTES] = [1000, 8 << 20];
/** A commit's buffers up to this size, and its batch up to this many events, are reused by the next. */
export const [REUSE_BYTES, REUSE_EVENTS] = [4 << 20, 1 << 16];
/**
 * How long a deferred append may wait for another append to commit with. A tool result waits for the harness's
 * next call (tens of µs away on a quiet machine, a few ms on a loaded one); nothing waits on the result itself.
 */
export const DEFER_MS = 4;

/**
 * Whether a store commits through its write-ahead journal when its options do not say (journal.ts): off, unless
 * BRAIN_STORE_JOURNAL is 1. The variable is there so that a whole test suite (and every daemon it starts, which
 * inherit it) runs with the journal on or off from one build, until the journal is on by default (issue 12).
 */
export function journalByDefault(env: NodeJS.ProcessEnv = process.env): boolean {
  const value = env.BRAIN_STORE_JOURNAL;
  if (value === undefined || value === "" || value === "0") return false;
  if (value === "1") return true;
  throw new Error(`BRAIN_STORE_JOURNAL must be 0 or 1, not ${value}`);
}
