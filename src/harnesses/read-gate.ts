// Stops reading an agent's output while the log of a session it writes for is behind (core/backlog.ts): a runner
// or extension host writing events faster than the disk commits them then blocks on its own full pipe (or socket)
// instead of growing Brain's memory. One stream may carry many sessions (a shared runner, an extension host): it
// is paused while ANY of them is over its bound, since the frames of one cannot be read past those of another;
// they share the disk, so a slow disk slows them all anyway. A session that stops being served (detached,
// closed, its host broken) lets go of its hold, so the others go on.
import type { Backlog } from "../core/backlog.js";

/** What the gate pauses: a child's stdout or a socket. */
export interface Pausable {
  pause(): unknown;
  resume(): unknown;
}

/**
 * How many times its `ms` a wait on a writer's answer lasts while the writer goes on writing: several times what
 * reading all a socket held takes on a loaded machine, yet an agent that streams on past an interrupt (spending
 * model requests) is stopped within a few graces, and a request on a busy shared runner waits a few timeouts.
 */
const READ_LIMIT = 5;

/** How a wait on a writer's answer ran out (afterRead): the writer fell silent, or it never did (READ_LIMIT). */
export type WaitEnd = "silent" | "still-writing";

/**
 * When a wait of `ms` (its `name`: "grace", "timeout") ran out, for a message that goes on from "did not ...":
 * " within 5000 ms" for a writer silent that long; for one that never fell silent, the hard limit that ended
 * the wait (": still writing after 25000 ms of reading (5 x the 5000 ms grace)"), which its ms do not explain.
 */
export function ranOut(end: WaitEnd, ms: number, name: string, unit: "ms" | "s" = "ms"): string {
  const time = (t: number) => (unit === "s" ? `${t / 1000} s` : `${t} ms`);
  if (end === "silent") return ` within ${time(ms)}`;
  return `: still writing after ${time(READ_LIMIT * ms)} of reading (${READ_LIMIT} x the ${time(ms)} ${name})`;
}

export class ReadGate {
  /** The sessions holding the stream paused, each with the function that cancels its wait for relief. */
  private readonly holds = new Map<string, () => void>();
  private stopped = false;
  /** How many times the stream was paused: a wait that saw it change did not read throughout. */
  private pauses = 0;
  /** How many chunks were read: a wait that saw it change heard from the writer. */
  private reads = 0;

  /** `stream`: what to pause, once there is one (a child still starting has none). */
  constructor(private readonly stream: () => Pausable | undefined) {}

  /**
   * Pauses the stream while session `id`'s backlog is full, until a commit relieves it. For once per chunk read,
   * after the chunk's events were appended: a counter compare when it is not full.
   */
  check(id: string, backlog: Backlog | undefined): void {
    if (this.stopped || backlog === undefined || !backlog.full || this.holds.has(id)) return;
    this.holds.set(
      id,
      backlog.whenRelieved(() => this.release(id)),
    );
    if (this.holds.size === 1) {
      this.pauses++;
      this.stream()?.pause();
    }
  }

  /** For each chunk (or message) read from the stream: a wait on the writer's answer is not over while it reads. */
  read(): void {
    this.reads++;
  }

  /**
   * Calls `fire` ("silent") once the writer was silent for `ms` with the stream read throughout, or
   * ("still-writing") once the stream was read for READ_LIMIT times `ms` in all; returns what cancels it. For a
   * wait on the writer's answer (an interrupt's grace, a request's timeout), which comes after all it wrote before:
   * while the stream is paused its answer may be in the pipe unread, and while Brain reads what was held (a socket,
   * with the reader's read-ahead, holds megabytes) its answer is on the way; neither is the
   * writer's silence. The limit gives up on a writer that never falls silent (streams on, ignoring a cancel).
   */
  afterRead(ms: number, fire: (end: WaitEnd) => void): () => void {
    let timer: NodeJS.Timeout | undefined;
    let immediate: NodeJS.Immediate | undefined;
    let readFor = 0;
    const arm = () => {
      const paused = this.pauses;
      const read = this.reads;
      const heard = () => this.reads !== read;
      const held = () => this.holds.size > 0 || this.pauses !== paused;
      timer = setTimeout(() => {
        if (held()) return arm();
        if (heard()) return ++readFor >= READ_LIMIT ? fire("still-writing") : arm();
        // After a stall (a loaded machine) timers run before what came meanwhile is read: it is read first.
        immediate = setImmediate(() => (held() || heard() ? arm() : fire("silent")));
      }, ms);
    };
    arm();
    return () => {
      clearTimeout(timer);
      clearImmediate(immediate);
    };
  }

  /** Session `id` is relieved or no longer served: the stream reads again once no other session holds it. */
  release(id: string): void {
    const cancel = this.holds.get(id);
    if (cancel === undefined) return;
    cancel();
    this.holds.delete(id);
    if (this.holds.size === 0) this.stream()?.resume();
  }

  /**
   * Lets go of every hold and pauses no more: a broken or closed stream is drained, so its writer is not left
   * blocked on it, and so is an exited child's: what it wrote last is read before its pipe is let go of (see
   * PendingChild), however far the log is behind.
   */
  stop(): void {
    this.stopped = true;
    for (const id of [...this.holds.keys()]) this.release(id);
  }
}
