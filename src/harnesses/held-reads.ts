// What the read gate pauses for an HTTP event stream (opencode's `/event`, an HTTP agent's POST /run): its reader,
// which waits between messages while held. A response body that is not read is not pulled from its socket (the
// HTTP client reads it only on demand), so the server's writes wait on TCP instead of Brain's heap growing with
// events its log cannot take yet.
import type { Pausable } from "./read-gate.js";

export class HeldReads implements Pausable {
  private waiting: Promise<void> | undefined;
  private wake: () => void = () => {};

  pause(): void {
    this.waiting ??= new Promise((resolve) => {
      this.wake = resolve;
    });
  }

  resume(): void {
    this.waiting = undefined;
    this.wake();
  }

  /**
   * Before the next message is read: runs `check` once what was handed on before has reached the log (a session
   * appends in a microtask queued with an event's emit, this comes after it), then waits while it holds reads.
   */
  async check(check: () => void): Promise<void> {
    await Promise.resolve();
    check();
    await this.waiting;
  }
}
