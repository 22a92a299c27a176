// Which commits skip the thread pool. A commit's write normally runs on one of libuv's threads, so the event
// loop goes on meanwhile and the commits of many logs overlap (the disk's journal takes them together). That is
// two hand-offs between threads per commit, each a wake-up of a sleeping thread: measured on a busy 2-vCPU VM at
// about 90 µs to get the write started and 55 µs to hear it is done, a sixth of a sequential tool round trip.
// When the commit is one a caller waits on (a harness blocked on its tool.call: nothing else of that session can
// happen until it is durable) and no other log of the store is committing, the loop has nothing to overlap with
// the write, and writing it on the loop's thread (the same O_DSYNC write, durable when it returns) saves both
// hand-offs. As soon as another log commits, every log goes back to the pool, so sessions never queue behind
// each other's syncs for longer than one write.
import { canWriteNow, type LogIO, writeDurably, writeDurablyNow } from "./log-io.js";

/**
 * How long after another log's commit started a log still counts as not alone. Longer than the gaps between a
 * streaming or tool-calling session's commits (a few ms at most), so two busy sessions keep each other on the
 * pool.
 */
const QUIET_MS = 20;
/**
 * A write on the calling thread that took longer than SLOW_MS (the disk stalls: a full journal, a busy device)
 * sends every commit back to the pool for BACKOFF_MS, so a stalling disk blocks the event loop for one write, not
 * for one per tool call: the loop keeps serving the daemon's requests and other sessions meanwhile.
 */
const [SLOW_MS, BACKOFF_MS] = [5, 1000];

/** Shared by the logs of one store: which of their commits may be written on the calling thread. */
export class InlineCommits {
  /** The log that started the last commit, and when. */
  private last: object | undefined;
  private lastAt = Number.NEGATIVE_INFINITY;
  /** Commits written through the pool and not done yet. */
  private pooled = 0;
  /** No commit is written on the calling thread before this time (after a slow one). */
  private poolUntil = Number.NEGATIVE_INFINITY;

  /**
   * `quietMs`: how long after another log's commit started a log still counts as not alone; `slowMs`: how long
   * a write on the calling thread may take before the next ones go through the pool for a while.
   */
  constructor(
    private readonly quietMs = QUIET_MS,
    private readonly slowMs = SLOW_MS,
  ) {}

  /**
   * Writes `bufs` from `position` of `log`'s file and resolves once it is durable (as writeDurably): on the calling
   * thread when the commit is `awaited`, `io` can, nothing is in flight on the pool, and no other log of the
   * store committed within QUIET_MS; through the pool otherwise.
   */
  async write(
    log: object,
    awaited: boolean,
    io: LogIO,
    fd: number,
    bufs: Buffer | readonly Buffer[],
    position: number,
  ): Promise<void> {
    const now = performance.now();
    const alone =
      this.pooled === 0 && (this.last === undefined || this.last === log || now - this.lastAt > this.quietMs);
    this.last = log;
    this.lastAt = now;
    if (awaited && alone && now >= this.poolUntil && canWriteNow(io)) {
      writeDurablyNow(io, fd, bufs, position);
      const done = performance.now();
      if (done - now > this.slowMs) this.poolUntil = done + BACKOFF_MS;
      return;
    }
    this.pooled++;
    try {
      await writeDurably(io, fd, bufs, position);
    } finally {
      this.pooled--;
    }
  }
}
