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
 * Once writes take longer than SLOW_MS on average (the disk stalls: a full journal, a busy device), every commit
 * goes through the pool until they take less than half that again, so a stalling disk blocks the event loop for
 * a few writes, not for one per tool call: the loop keeps serving the daemon's requests and other sessions
 * meanwhile. An average over recent writes (each weighs 1/WEIGHT), not a single write: on a busy VM about one
 * write in a hundred takes over 5 ms (its thread waits for a core), and a fixed second on the pool after each
 * such outlier kept a sequential tool caller on the pool most of the time. A real stall still sends commits to
 * the pool within a few writes (after one of 40 ms), and the pool's writes, timed too, say when it is over.
 */
const [SLOW_MS, WEIGHT] = [5, 8];

/** Shared by the logs of one store: which of their commits may be written on the calling thread. */
export class InlineCommits {
  /** The log that started the last commit, and when. */
  private last: object | undefined;
  private lastAt = Number.NEGATIVE_INFINITY;
  /** Commits written through the pool and not done yet. */
  private pooled = 0;
  /** Recent writes' duration, averaged: those on the calling thread, and the pool's while backingOff. */
  private averageMs = 0;
  /** Writes were slow on average: no commit is written on the calling thread until they are fast again. */
  private backingOff = false;

  /**
   * `quietMs`: how long after another log's commit started a log still counts as not alone; `slowMs`: how long
   * writes may take on average before commits go through the pool until they are fast again;
   * `clock`: milliseconds, as performance.now (tests give their own).
   */
  constructor(
    private readonly quietMs = QUIET_MS,
    private readonly slowMs = SLOW_MS,
    private readonly clock: () => number = () => performance.now(),
  ) {}

  /**
   * Writes `bufs` from `position` of `log`'s file and resolves once it is durable (as writeDurably): on the calling
   * thread when the commit is `awaited`, `io` can, nothing is in flight on the pool, and no other log of the
   * store committed within QUIET_MS; through the pool otherwise, or through `viaPool` when given (the store's
   * journal: it is what makes a commit durable there, see journal.ts).
   */
  async write(
    log: object,
    awaited: boolean,
    io: LogIO,
    fd: number,
    bufs: Buffer | readonly Buffer[],
    position: number,
    viaPool?: () => Promise<void>,
  ): Promise<void> {
    const now = this.clock();
    const alone =
      this.pooled === 0 && (this.last === undefined || this.last === log || now - this.lastAt > this.quietMs);
    this.last = log;
    this.lastAt = now;
    if (awaited && alone && !this.backingOff && canWriteNow(io)) {
      writeDurablyNow(io, fd, bufs, position);
      this.observe(this.clock() - now);
      return;
    }
    this.pooled++;
    try {
      await (viaPool ? viaPool() : writeDurably(io, fd, bufs, position));
    } finally {
      this.pooled--;
    }
    if (this.backingOff) this.observe(this.clock() - now);
  }

  private observe(ms: number): void {
    this.averageMs += (ms - this.averageMs) / WEIGHT;
    if (this.averageMs > this.slowMs) this.backingOff = true;
    else if (this.averageMs < this.slowMs / 2) this.backingOff = false;
  }
}
