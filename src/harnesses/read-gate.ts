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

export class ReadGate {
  /** The sessions holding the stream paused, each with the function that cancels its wait for relief. */
  private readonly holds = new Map<string, () => void>();
  private stopped = false;
  /** How many times the stream was paused: a wait that saw it change did not read throughout. */
  private pauses = 0;

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

  /**
   * Calls `fire` once `ms` have passed with the stream read throughout; returns what cancels it. For a wait on the
   * writer's answer (an interrupt's grace, a request's timeout): while the stream is paused its answer may be in
   * the pipe unread, its silence is Brain's, and the wait starts again.
   */
  afterRead(ms: number, fire: () => void): () => void {
    let timer: NodeJS.Timeout;
    const arm = () => {
      const paused = this.pauses;
      timer = setTimeout(() => (this.holds.size > 0 || this.pauses !== paused ? arm() : fire()), ms);
    };
    arm();
    return () => clearTimeout(timer);
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
