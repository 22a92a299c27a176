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

/** Shared by the logs of one store: which of their commits may be written on the calling thread. */
export class InlineCommits {
  /** The log that started the last commit, and when. */
  private last: object | undefined;
  private lastAt = Number.NEGATIVE_INFINITY;
  /** Commits written through the pool and not done yet. */
  private pooled = 0;

  /** `quietMs`: how long after another log's commit started a log still counts as not alone. */
  constructor(private readonly quietMs = QUIET_MS) {}

  /**
   * Writes `buf` at `position` of `log`'s file and resolves once it is durable (as writeDurably): on the calling
   * thread when the commit is `awaited`, `io` can, nothing is in flight on the pool, and no other log of the
   * store committed within QUIET_MS; through the pool otherwise.
   */
  async write(
    log: object,
    awaited: boolean,
    io: LogIO,
    fd: number,
    buf: Buffer,
    position: number,
  ): Promise<void> {
    const now = performance.now();
    const alone =
      this.pooled === 0 && (this.last === undefined || this.last === log || now - this.lastAt > this.quietMs);
    this.last = log;
    this.lastAt = now;
    if (awaited && alone && canWriteNow(io)) return writeDurablyNow(io, fd, buf, position);
    this.pooled++;
    try {
      await writeDurably(io, fd, buf, position);
    } finally {
      this.pooled--;
    }
  }
}
