// Stops reading an agent's output while the log of a session it writes for is behind (core/backlog.ts): a runner
// or extension host writing events faster than the disk commits them then blocks on its own full pipe (or socket)
// instead of growing Brain's memory. One stream may carry many sessions (a shared runner, an extension host): it
// is paused while ANY of them is over its bound, since the frames of one cannot be read past those of another;
// they share the disk, so a slow disk slows them all anyway. A session that stops being served (detached,
// closed, its host broken) lets go of its hold, so the others go on.
//
// A gate with a read-ahead (a shared runner's, whose sessions are other tenants' too) does not pause for one
// session's log: one log behind (its stream on the NATS store, a session's flood) would stall every other
// session's turn. The frames of a session that is behind are held back in memory, in order, up to the read-ahead
// bound, while the stream is read on for the others; only past that bound is the stream paused, the last resort
// that keeps Brain's memory bounded. Once the session's log is relieved its frames go on to it, in order, before
// anything read after them. The read-ahead has two bounds: one session's (READ_AHEAD_BYTES) and the whole
// host's (HOST_READ_AHEAD_BYTES by default), what all its sessions behind hold back together: without it a host
// with N sessions behind held N times one session's read-ahead. Past either the stream is paused, and it reads
// again once what is held back is within both (a session relieved takes its frames with it).
import { BACKLOG_BYTES, type Backlog } from "../core/backlog.js";

/**
 * What a shared runner may hold back for one session whose log is behind, past its backlog, before its stdout is
 * paused: half the backlog's bound, so a session holds at most 1.5 times what it held before (as frames are read,
 * beside the events waiting for its log), and a burst of several MiB for a slow log goes by without stalling the
 * other sessions. A frame is held whole, so one may go past it by a frame.
 */
export const READ_AHEAD_BYTES = BACKLOG_BYTES / 2;

/**
 * What a shared runner may hold back for all its sessions behind together before its stdout is paused, unless its
 * RunnerCommand.hostReadAheadBytes says otherwise: eight sessions' read-ahead, so up to eight logs behind at once
 * (a lagging store stream, a few tenants' floods) each get their whole read-ahead without stalling the others, and
 * a host serving hundreds of sessions holds at most this much in frames read ahead, however many are behind. More
 * logs behind than that at once is a disk (or store) that has fallen behind for all, which they share: pausing
 * the host then costs little. It may be passed by the rest of the pipe read that crossed it (64 KiB at most) and
 * a frame, as a frame is held whole; a session's backlog (BACKLOG_BYTES) is its own, beside this.
 */
export const HOST_READ_AHEAD_BYTES = 8 * READ_AHEAD_BYTES;

/** A gate's read-ahead bounds: the bytes held back for one session, and for all of them together. */
export interface ReadAhead {
  session: number;
  host: number;
}

/** A shared runner's read-ahead: READ_AHEAD_BYTES a session, `host` for all (HOST_READ_AHEAD_BYTES if not given). */
export function sharedReadAhead(host = HOST_READ_AHEAD_BYTES): ReadAhead {
  return { session: READ_AHEAD_BYTES, host };
}

/** The frames held back for a session whose log is behind, in the order read, and about how many bytes they are. */
interface HeldBack {
  deliver: (() => void)[];
  bytes: number;
}

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
  /** With a read-ahead: the frames held back for each session that is behind (see holdBack). */
  private readonly heldBack = new Map<string, HeldBack>();
  /** With a read-ahead: the sessions whose frames held back are over it, for which the stream is paused. */
  private readonly over = new Set<string>();
  /** With a read-ahead: the bytes held back for all sessions together (see ReadAhead.host). */
  private heldBytes = 0;
  /** With a read-ahead: whether the stream is paused for what is held back (a session's or the host's bound). */
  private pausedAhead = false;

  /**
   * `stream`: what to pause, once there is one (a child still starting has none). `readAhead`: the bytes of frames
   * held back while a session's log is behind, for that session and for all together, before the stream is
   * paused; none: it is paused at once.
   */
  constructor(
    private readonly stream: () => Pausable | undefined,
    private readonly readAhead?: ReadAhead,
  ) {}

  /** The bytes of the frames held back now, for all sessions together (see holdBack). */
  get heldBackBytes(): number {
    return this.heldBytes;
  }

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
    if (this.readAhead !== undefined) this.heldBack.set(id, { deliver: [], bytes: 0 });
    else if (this.holds.size === 1) this.pause();
  }

  /** Whether session `id`'s frames are held back (a gate with a read-ahead whose session is behind): see holdBack. */
  holding(id: string): boolean {
    return this.heldBack.has(id);
  }

  /**
   * Holds back a frame of session `id` (`bytes` long) while it is `holding`, to `deliver` in order once its log
   * is relieved; pauses the stream once what it holds back is over the session's read-ahead, or what all sessions
   * hold back is over the host's.
   */
  holdBack(id: string, bytes: number, deliver: () => void): void {
    const held = this.heldBack.get(id);
    if (held === undefined) return deliver();
    held.deliver.push(deliver);
    held.bytes += bytes;
    this.heldBytes += bytes;
    if (held.bytes > this.readAhead!.session) this.over.add(id);
    this.pauseAhead();
  }

  /** Pauses the stream while what is held back is over a bound (see ReadAhead), and resumes it once it is not. */
  private pauseAhead(): void {
    const over = this.over.size > 0 || this.heldBytes > this.readAhead!.host;
    if (over === this.pausedAhead) return;
    this.pausedAhead = over;
    if (over) this.pause();
    else this.stream()?.resume();
  }

  private pause(): void {
    this.pauses++;
    this.stream()?.pause();
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

  /**
   * Session `id` is relieved or no longer served: what was held back for it goes on to it, in order (a session no
   * longer served drops it: see forget), and the stream reads again once no other session holds it paused.
   */
  release(id: string): void {
    const cancel = this.holds.get(id);
    if (cancel === undefined) return;
    cancel();
    this.holds.delete(id);
    const held = this.heldBack.get(id);
    if (held === undefined) {
      if (this.holds.size === 0 && this.readAhead === undefined) this.stream()?.resume();
      return;
    }
    this.heldBack.delete(id);
    this.heldBytes -= held.bytes;
    this.over.delete(id);
    for (const deliver of held.deliver) deliver();
    this.pauseAhead();
  }

  /** Session `id` is no longer served (detached): what was held back for it is dropped, and its hold let go of. */
  forget(id: string): void {
    this.heldBack.get(id)?.deliver.splice(0);
    this.release(id);
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
