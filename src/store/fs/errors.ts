// Errors of the embedded store, carrying Brain's error code: disk trouble is ours, a bad id is the caller's.
import { BrainError } from "../../core/errors.js";
import type { SessionEvent } from "../../protocol/events.js";

export class StoreError extends BrainError {
  override name = "StoreError";
  constructor(
    code: "brain_error" | "bad_request" | "locked" | "insufficient_storage",
    message: string,
    options?: { cause?: unknown; session?: string },
  ) {
    super(code, message, options);
  }
}

/**
 * What the error of a log damaged at one place says after where and what (this store's damaged line, the cluster
 * store's damaged message): whose log, that nothing from there on reads, and the ways out. `aside` tells the damage
 * from what is not one; `mend`, how the damaged part could be mended, if it can.
 */
export function damagedLogWording(session: string, aside: string, mend: string): string {
  return `The log of session ${session} is damaged there${aside}: nothing from there on can be read, so the session takes no command that needs it. ${mend}, or delete the session (DELETE /v1/sessions/${session}, or brain sessions rm ${session})`;
}

/** `error` with the events its read got before the damage, for a reader that needs no more (readBeforeDamage). */
export function withReadable<E extends Error>(error: E, readable: SessionEvent[]): E {
  return Object.assign(error, { readable });
}

/** `ENOSPC: no space left on device, write` is already what an operator needs; keep Node's message whole. */
export function osMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * A failure of the log's file, naming the file and what was being done. A full disk also says what it means to
 * the client (the failed write was undone; what the log acknowledged before stays) and what to do.
 */
export function failure(path: string, what: string, err: unknown): StoreError {
  const message = `event log ${path}: ${what}: ${osMessage(err)}`;
  if (!isDiskFull(err)) return new StoreError("brain_error", message, { cause: err });
  return new StoreError(
    "insufficient_storage",
    `${message}. The host's disk is full: this request was not taken, and nothing the session acknowledged before it is lost; free space on the daemon's disk (or raise its quota), then send it again`,
    { cause: err },
  );
}

function isDiskFull(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return code === "ENOSPC" || code === "EDQUOT";
}

/** A disk operation that failed, naming it and the path (a StoreError already made is passed through). */
export function diskError(op: string, path: string, err: unknown): StoreError {
  if (err instanceof StoreError) return err;
  const message = `cannot ${op} ${path}: ${osMessage(err)}`;
  if (!isDiskFull(err)) return new StoreError("brain_error", message, { cause: err });
  return new StoreError(
    "insufficient_storage",
    `${message}. The host's disk is full: free space on the daemon's disk (or raise its quota), then send the request again`,
    { cause: err },
  );
}

/** Runs a disk operation, its failure a StoreError naming the operation and the path. */
export async function disk<T>(op: string, path: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw diskError(op, path, err);
  }
}
