// The places of one attachment's reverse tool calls: seed A's 32 in flight, and a bounded wait for the rest.
import { UNREAD_INPUT_LIMITS } from "../../protocol/unread-input.js";
import { Semaphore } from "./semaphore.js";

/**
 * Seed A: up to 32 concurrent reverse tool calls per runner, that is per harness.Runner, one session's. Counted per
 * attachment: on a shared host, one session's calls that wait (a slow tool, a permission nobody answers) must
 * not hold back another session's.
 */
export const MAX_TOOL_CALLS_IN_FLIGHT = 32;

/**
 * A runner need not count its calls: those past the 32 wait for a place, holding their arguments. At most this
 * many wait, and this many bytes of arguments, the bound on what an MCP peer may leave unread: a runner that kept
 * calling while its calls waited grew Brain's memory without bound.
 */
export const MAX_TOOL_CALLS_WAITING = UNREAD_INPUT_LIMITS.messages;
const MAX_WAITING_BYTES = UNREAD_INPUT_LIMITS.bytes;

export class CallPlaces {
  private readonly places = new Semaphore(MAX_TOOL_CALLS_IN_FLIGHT);
  private waitingCalls = 0;
  private waitingBytes = 0;
  /** The frame ids of the calls taken and not yet answered: the runner matches an answer to its call by it alone. */
  private readonly unanswered = new Set<string>();

  constructor(private readonly maxWaiting = MAX_TOOL_CALLS_WAITING) {}

  /**
   * Calls `start` once a place is free (at once when one is), then release() when the call is done; or, when the
   * call may not wait for one, returns why (and `start` is never called).
   */
  take(frameId: string, args: unknown, start: () => void): string | undefined {
    if (this.places.inFlight < this.places.limit) {
      this.places.acquire();
      this.unanswered.add(frameId);
      start();
      return undefined;
    }
    const bytes = jsonSize(args);
    if (this.waitingCalls >= this.maxWaiting || this.waitingBytes + bytes > MAX_WAITING_BYTES) {
      return `${this.waitingCalls} calls (${this.waitingBytes} bytes of arguments) already wait behind the ${this.places.limit} running, and at most ${this.maxWaiting} calls or ${MAX_WAITING_BYTES} bytes may`;
    }
    this.waitingCalls++;
    this.waitingBytes += bytes;
    this.unanswered.add(frameId);
    void (this.places.acquire() as Promise<void>).then(() => {
      this.waitingCalls--;
      this.waitingBytes -= bytes;
      start();
    });
    return undefined;
  }

  /** The call taken as `frameId` has been answered. */
  release(frameId: string): void {
    this.places.release();
    this.unanswered.delete(frameId);
  }

  /** Whether a call taken as `frameId` still waits for its answer. */
  awaits(frameId: string): boolean {
    return this.unanswered.has(frameId);
  }
}

/** The length of `value`'s JSON; past any bound for a value JSON cannot write (nested too deep). */
function jsonSize(value: unknown): number {
  try {
    return JSON.stringify(value)?.length ?? 0;
  } catch {
    return Number.POSITIVE_INFINITY;
  }
}
