// A spinner with the elapsed time, drawn after whatever the terminal shows (mid-line too) and erased before
// the next output, so streamed text is never broken. Only on a terminal, and never in machine output (--json).
const FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

export class Spinner {
  private timer: NodeJS.Timeout | undefined;
  private started = 0;
  private frame = 0;
  private drawn = 0;

  constructor(
    private readonly out: NodeJS.WriteStream,
    private readonly label: () => string = () => "",
    private readonly wanted = true,
  ) {}

  get enabled(): boolean {
    return this.wanted && this.out.isTTY === true;
  }

  start(): void {
    if (!this.enabled || this.timer) return;
    this.started = Date.now();
    this.timer = setInterval(() => this.draw(), 100);
    this.timer.unref();
    this.draw();
  }

  stop(): void {
    if (!this.timer) return;
    clearInterval(this.timer);
    this.timer = undefined;
    this.erase();
  }

  /** Erases the spinner; call before writing anything, then resume() after. */
  erase(): void {
    if (this.drawn === 0) return;
    this.out.write("\x1b[K");
    this.drawn = 0;
  }

  private draw(): void {
    this.erase();
    const seconds = ((Date.now() - this.started) / 1000).toFixed(1);
    const label = this.label();
    const text = ` ${FRAMES[this.frame++ % FRAMES.length]} ${seconds}s${label ? ` ${label}` : ""}`;
    // Write, then step back over it: the next output overwrites it after erase().
    this.out.write(`${text}\x1b[${text.length}D`);
    this.drawn = text.length;
  }
}
