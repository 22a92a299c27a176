/** At most `limit` holders at once; the rest wait in FIFO order (none is dropped). */
export class Semaphore {
  private active = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(readonly limit: number) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.active >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.active++;
    try {
      return await task();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.active--;
    }
  }

  /**
   * Takes a place when one is free (true: call release() when done), or queues for one (the promise: resolved
   * with the place taken). For hot callers that would pay run()'s promise and closure per task.
   */
  acquire(): true | Promise<void> {
    if (this.active < this.limit) {
      this.active++;
      return true;
    }
    return new Promise<void>((resolve) => this.waiting.push(resolve));
  }

  /** Gives back a place taken by acquire(): to the first waiter, if any. */
  release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.active--;
  }

  get inFlight(): number {
    return this.active;
  }
}
