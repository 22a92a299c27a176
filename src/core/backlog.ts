// How far a session's log is behind what its harness emits. Nothing else slows a harness that writes faster than
// the disk commits (a flooding runner or extension host, a stalled fsync): every event it writes is decoded and
// held in Brain's memory until its commit. A harness that reads its agent's output pauses reading while the
// session's backlog is full and resumes once a commit brings it under half: the agent's pipe fills and its
// writes block, so the kernel holds what waits, and nothing read is dropped or reordered.
import type { PendingWrites } from "./event-log.js";

/**
 * The bytes of a session's events that may wait for the disk before its harness stops reading: two frames of the
 * largest size a runner may write (MAX_FRAME), so a frame read whole always fits, and hundreds of times what a
 * fast stream puts in one commit on a healthy disk (a few hundred KiB in a millisecond's fdatasync), so a reader
 * only ever pauses for a disk that has fallen behind. Per session: a host with many sessions on a slow disk may
 * hold this much for each of them, as it holds their other state.
 */
export const BACKLOG_BYTES = 8 << 20;

export class Backlog {
  constructor(
    private readonly pending: PendingWrites,
    readonly bound = BACKLOG_BYTES,
  ) {}

  /** The bytes appended and not yet durable (nor failed). */
  get bytes(): number {
    return this.pending.bytes;
  }

  /** Whether the harness should stop reading its agent: a counter compare, for once per chunk read. */
  get full(): boolean {
    return this.pending.bytes > this.bound;
  }

  /**
   * Calls `resume` once, when a commit (durable or failed) leaves less than half the bound waiting, so a reader
   * does not pause and resume on every commit. Returns the function that cancels it (a detached reader).
   */
  whenRelieved(resume: () => void): () => void {
    const off = this.pending.onCommitted(() => {
      if (this.pending.bytes >= this.bound / 2) return;
      off();
      resume();
    });
    return off;
  }
}
