// The log of model requests, with waiters so a test can block until the harness has actually called the model
// (e.g. before interrupting it) instead of sleeping.
import type { FakeProviderRequest } from "./types.js";

interface Waiter {
  count: number;
  resolve: () => void;
}

export class RequestLog {
  /** Shared with FakeProvider.requests: cleared in place, never replaced. */
  readonly entries: FakeProviderRequest[] = [];
  private waiters: Waiter[] = [];
  private seq = 0;

  nextSeq(): number {
    return ++this.seq;
  }

  record(entry: FakeProviderRequest): void {
    this.entries.push(entry);
    const ready = this.waiters.filter((w) => this.entries.length >= w.count);
    this.waiters = this.waiters.filter((w) => this.entries.length < w.count);
    for (const w of ready) w.resolve();
  }

  clear(): void {
    this.entries.length = 0;
    this.seq = 0;
  }

  waitFor(count: number, timeoutMs: number): Promise<FakeProviderRequest[]> {
    return new Promise((resolve, reject) => {
      if (this.entries.length >= count) return resolve(this.entries.slice(0, count));
      const waiter: Waiter = {
        count,
        resolve: () => {
          clearTimeout(timer);
          resolve(this.entries.slice(0, count));
        },
      };
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        reject(new Error(`fake provider: ${this.entries.length} of ${count} requests after ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiters.push(waiter);
    });
  }
}
