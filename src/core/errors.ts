// Errors the core (and the store and tools built on it) throw carry a code saying whose fault they are; edges
// map the code (the daemon to an HTTP status, the CLI to its exit) and never read the message to decide.
import type { SessionEvent } from "../protocol/events.js";

export type BrainErrorCode =
  /** The caller asked for something impossible or malformed (an unknown harness, tool, checkpoint, id). */
  | "bad_request"
  | "not_found"
  /** The request clashes with the session's state (a turn is running, the request was answered already). */
  | "conflict"
  /** Another process holds the session's log. */
  | "locked"
  | "payload_too_large"
  /** Cluster mode: the session runs only on another node (its harness state cannot move). */
  | "pinned"
  /** A bound the operator set (sessions open per tenant) is reached: not an error of this request's shape. */
  | "limit_reached"
  /** The host's disk (or quota) is full: nothing of the request was kept, nothing acknowledged before is lost. */
  | "insufficient_storage"
  /** The host failed (disk, a broken file): not the caller's doing. */
  | "brain_error";

export class BrainError extends Error {
  override name = "BrainError";
  constructor(
    readonly code: BrainErrorCode,
    message: string,
    options: { field?: string; session?: string; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    if (options.field !== undefined) this.field = options.field;
    if (options.session !== undefined) this.session = options.session;
  }

  /** The input field at fault, when there is one (`harness`, `config.tools`, ...). */
  readonly field?: string;
  /** Of a `locked` refusal: the session whose lock or lease refused (a caller tells its own from another's). */
  readonly session?: string;
}

/** A caller's mistake (a prompt while a turn runs, an unknown request id): a 400/404/409, not a host failure. */
export class SessionError extends BrainError {
  override name = "SessionError";
  constructor(code: Exclude<BrainErrorCode, "brain_error">, message: string, field?: string) {
    super(code, message, field === undefined ? {} : { field });
  }
}

/**
 * The events a log read got before a damaged line ended it, carried by the error it failed with (an empty list
 * when the read met the damage first, or failed for another reason). A reader that needs only what came before
 * the damage (a page, a fork's history up to its checkpoint) can use them; any other must fail.
 */
export function readBeforeDamage(err: unknown): SessionEvent[] {
  const readable = (err as { readable?: unknown } | undefined)?.readable;
  return err instanceof BrainError && Array.isArray(readable) ? (readable as SessionEvent[]) : [];
}

/**
 * A command its session's close overtook: the command was on its way when the close came (one that comes after
 * a close waits for it and reopens the session, src/core/live-sessions.ts).
 */
export const closedWhileTaken = (id: string) =>
  new SessionError(
    "conflict",
    `session ${id} was closed while the command was being taken; sent again, it reopens the session`,
  );
