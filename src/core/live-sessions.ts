// The host's one registry of live sessions: at most one Session object per id in this process, and the news of
// each one opening and closing for whoever serves them (the daemon keeps its watchers' feeds on it).
import { SessionError } from "./errors.js";
import type { EventLog } from "./event-log.js";
import type { Session } from "./session.js";

export interface LiveSession {
  session: Session;
  /** The tenant that owns it; undefined is the default tenant. */
  tenant?: string;
}

export type LiveChange =
  | ({ type: "opened" } & LiveSession)
  /** Closed: its harness is released and its log closed (`log` is the one it had). */
  | { type: "closed"; id: string; log: EventLog }
  /** Deleted with all its files, whether or not it was live. */
  | { type: "deleted"; id: string };

export class LiveSessions {
  /** Opening or open, so two callers asking at once share one open. */
  private readonly opening = new Map<string, Promise<Session>>();
  private readonly open = new Map<string, LiveSession>();
  private readonly listeners = new Set<(change: LiveChange) => void>();
  /** What exclusive() runs now: `what` and the session id. */
  private readonly held = new Set<string>();
  /** Closes and deletes under way (closing()): a closed session stays registered until its record says so. */
  private readonly closing = new Map<string, Promise<void>>();

  /**
   * Resolves once no close or delete of `id` is under way (closing()). A command that comes while one is comes
   * after it, and is answered as it would be a moment later (a prompt reopens a closed session, a deleted one is
   * not found), not by the closed session still registered (whose log is closed: a keyed command's read of it
   * failed with a 500) nor by a second open of a log being closed and deleted (409 "already open").
   */
  async closeDone(id: string): Promise<void> {
    for (let closing = this.closing.get(id); closing; closing = this.closing.get(id)) await closing;
  }

  /** Runs `work`, which closes or deletes session `id`, as under way until it ends: closeDone(id) waits for it. */
  closingWhile<T>(id: string, work: () => Promise<T>): Promise<T> {
    const run = work();
    const all = Promise.allSettled([this.closing.get(id), run]).then(() => {});
    this.closing.set(id, all);
    void all.then(() => {
      if (this.closing.get(id) === all) this.closing.delete(id);
    });
    return run;
  }

  /**
   * Closes session `id` (opened by `make` only to be closed if it is not open) with `close`, which says whether it
   * recorded it closed (false: the session is gone), and forgets it once that is done.
   */
  close(
    id: string,
    make: () => Promise<LiveSession>,
    close: (session: Session) => Promise<boolean>,
  ): Promise<void> {
    return this.closingWhile(id, async () => {
      const live = this.get(id, make);
      const session = await live;
      const marked = await close(session);
      this.take(id, live);
      if (marked) this.notify({ type: "closed", id, log: session.log });
    });
  }

  /** The session `id`, opened by `make` unless it is open or opening already. */
  get(id: string, make: () => Promise<LiveSession>): Promise<Session> {
    let session = this.opening.get(id);
    if (!session) {
      session = make().then((live) => {
        if (this.opening.get(id) === session) {
          this.open.set(id, live);
          this.notify({ type: "opened", ...live });
        }
        return live.session;
      });
      this.opening.set(id, session);
      session.catch(() => {
        if (this.opening.get(id) === session) this.opening.delete(id);
      });
    }
    return session;
  }

  /** The session if it is open now (not merely opening). */
  find(id: string): LiveSession | undefined {
    return this.open.get(id);
  }

  list(): LiveSession[] {
    return [...this.open.values()];
  }

  /** Open or being opened. */
  busy(id: string): boolean {
    return this.opening.has(id);
  }

  /**
   * Forgets `id` and returns what was open or opening, for the caller to close. With `only`: only while that is
   * what is registered, for a caller that closed it and awaited since, while the session may have been opened anew.
   */
  take(id: string, only?: Promise<Session>): Promise<Session> | undefined {
    const session = this.opening.get(id);
    if (only && session !== only) return undefined;
    this.opening.delete(id);
    this.open.delete(id);
    return session;
  }

  /**
   * Runs `fn` unless another `fn` of the same `what` runs for `id` (refused with a conflict that says so): for what
   * must not overlap itself on one session, such as a rebuild of its native state.
   */
  async exclusive<T>(id: string, what: string, fn: () => Promise<T>): Promise<T> {
    const key = `${what}\0${id}`;
    if (this.held.has(key)) {
      throw new SessionError(
        "conflict",
        `session ${id} is being ${what} already: wait for that to end, then ask again if need be`,
      );
    }
    this.held.add(key);
    try {
      return await fn();
    } finally {
      this.held.delete(key);
    }
  }

  /**
   * Why a prompt or checkpoint of `id` is refused now: an exclusive() runs on it (a rebuild rewriting its native
   * dir, across the closes and reopens it makes). Undefined when none does.
   */
  keepsOut(id: string): string | undefined {
    for (const key of this.held) {
      const [what, held] = key.split("\0");
      if (held === id) {
        return `session ${id} is being ${what}, which keeps prompts and checkpoints out: ask again once it ends`;
      }
    }
    return undefined;
  }

  /** Forgets every session and returns them, for the caller to close. */
  takeAll(): Promise<Session>[] {
    const all = [...this.opening.values()];
    this.opening.clear();
    this.open.clear();
    return all;
  }

  /** Calls `listener` with every change from now on. Returns the unsubscribe function. */
  subscribe(listener: (change: LiveChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  notify(change: LiveChange): void {
    for (const listener of [...this.listeners]) listener(change);
  }
}
