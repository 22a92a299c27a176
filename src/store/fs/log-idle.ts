// When a log's file is closed for idleness: once nothing has used it for idleMs. Every commit uses the file, so a
// use only moves the deadline: one timer runs per idle period, checked when it fires, instead of a clearTimeout
// and a setTimeout per commit (with 100 sessions streaming, tens of thousands of timers a second on the daemon's
// thread).

export class IdleClock {
  private timer: NodeJS.Timeout | undefined;
  private due = 0;

  /** `fire` runs once `ms` have passed since the last restart; it checks itself that the file is unused. */
  constructor(
    private readonly ms: number,
    private readonly fire: () => void,
  ) {}

  /** The file is unused from now (a use ended). */
  restart(): void {
    if (!Number.isFinite(this.ms)) return;
    this.due = performance.now() + this.ms;
    this.timer ??= this.arm(this.ms);
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private arm(ms: number): NodeJS.Timeout {
    const timer = setTimeout(this.check, ms);
    timer.unref();
    return timer;
  }

  private readonly check = (): void => {
    this.timer = undefined;
    const left = this.due - performance.now();
    if (left > 0) this.timer = this.arm(left);
    else this.fire();
  };
}
