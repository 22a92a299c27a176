// Every open event stream of the daemon: heartbeats for all of them from one timer, the list to end on
// shutdown, and a bound per tenant: each stream holds a socket and up to its buffers, so one tenant's thousands
// of streams could take the descriptors and memory every other tenant's requests need.
import { ApiError } from "../errors.js";
import type { CloseReason, SseStream } from "./stream.js";

export const HEARTBEAT_MS = 15_000;

export class Watchers {
  private readonly streams = new Set<SseStream>();
  private readonly perTenant = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  /** Streams ended so far, by why: "slow" counts watchers cut off for falling behind. */
  readonly closed: Record<CloseReason, number> = { client: 0, slow: 0, ended: 0, error: 0 };

  /** `maxPerTenant` absent: no bound. */
  constructor(
    private readonly heartbeatMs = HEARTBEAT_MS,
    private readonly maxPerTenant?: number,
  ) {}

  /** Refuses a stream the tenant has no room for (429, naming the bound); call before anything is sent. */
  roomFor(tenant: string): void {
    const open = this.perTenant.get(tenant) ?? 0;
    if (this.maxPerTenant !== undefined && open >= this.maxPerTenant) {
      throw new ApiError(
        "limit_reached",
        `tenant "${tenant}" has ${open} event streams open on this daemon, its limit: close one it no longer reads and try again, or raise limits.event_streams_per_tenant in brain.config.json`,
      );
    }
  }

  /** Registers an open stream of `tenant`; call the returned function with the reason when it closes. */
  add(stream: SseStream, tenant: string): (reason: CloseReason) => void {
    this.streams.add(stream);
    this.perTenant.set(tenant, (this.perTenant.get(tenant) ?? 0) + 1);
    if (!this.timer) {
      this.timer = setInterval(() => {
        for (const s of this.streams) s.comment("ping");
      }, this.heartbeatMs);
      this.timer.unref();
    }
    return (reason) => {
      if (!this.streams.delete(stream)) return;
      const left = (this.perTenant.get(tenant) ?? 1) - 1;
      if (left > 0) this.perTenant.set(tenant, left);
      else this.perTenant.delete(tenant);
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
