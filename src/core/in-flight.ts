// A count of things under way (a turn's appends, its tool calls) and a wait for none to be: what a Set of their
// promises gave, without a promise, a chained promise and two Set operations for each of thousands per second.

export class InFlight {
  private n = 0;
  private waiters: (() => void)[] | undefined;

  get size(): number {
    return this.n;
  }

  start(): void {
    this.n++;
  }

  /** One has ended (each start() is matched by one end()). */
  end(): void {
    this.n--;
    if (this.n > 0 || this.waiters === undefined) return;
    const waiters = this.waiters;
    this.waiters = undefined;
    for (const wake of waiters) wake();
  }

  /** Resolves once none is under way, including any started while waiting. */
  async idle(): Promise<void> {
    while (this.n > 0) {
      this.waiters ??= [];
      const waiters = this.waiters;
      await new Promise<void>((resolve) => waiters.push(resolve));
    }
  }
}
