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
