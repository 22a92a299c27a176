// Every open event stream of the daemon: heartbeats for all of them from one timer, and the list to end on
// shutdown.
import type { CloseReason, SseStream } from "./stream.js";

export const HEARTBEAT_MS = 15_000;

export class Watchers {
  private readonly streams = new Set<SseStream>();
  private timer: NodeJS.Timeout | undefined;
  /** Streams ended so far, by why: "slow" counts watchers cut off for falling behind. */
  readonly closed: Record<CloseReason, number> = { client: 0, slow: 0, ended: 0, error: 0 };

  constructor(private readonly heartbeatMs = HEARTBEAT_MS) {}

  /** Registers an open stream; call the returned function with the reason when it closes. */
  add(stream: SseStream): (reason: CloseReason) => void {
    this.streams.add(stream);
    if (!this.timer) {
      this.timer = setInterval(() => {
        for (const s of this.streams) s.comment("ping");
      }, this.heartbeatMs);
      this.timer.unref();
    }
    return (reason) => {
      if (!this.streams.delete(stream)) return;
      this.closed[reason] += 1;
      if (this.streams.size === 0 && this.timer) {
        clearInterval(this.timer);
        this.timer = undefined;
      }
    };
  }

  get size(): number {
    return this.streams.size;
  }

  closeAll(): void {
    for (const stream of [...this.streams]) stream.close("ended");
  }
}
