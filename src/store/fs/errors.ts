// Errors of the embedded store, carrying Brain's error code: disk trouble is ours, a bad id is the caller's.
import { BrainError } from "../../core/errors.js";

export class StoreError extends BrainError {
  override name = "StoreError";
  constructor(
    code: "brain_error" | "bad_request" | "locked",
    message: string,
    options?: { cause?: unknown },
  ) {
    super(code, message, options);
  }
}

/** `ENOSPC: no space left on device, write` is already what an operator needs; keep Node's message whole. */
export function osMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** A failure of the log's file, naming the file and what was being done. */
export function failure(path: string, what: string, err: unknown): StoreError {
  return new StoreError("brain_error", `event log ${path}: ${what}: ${osMessage(err)}`, { cause: err });
}

/** A disk operation that failed, naming it and the path (a StoreError already made is passed through). */
export function diskError(op: string, path: string, err: unknown): StoreError {
  if (err instanceof StoreError) return err;
  return new StoreError("brain_error", `cannot ${op} ${path}: ${osMessage(err)}`, { cause: err });
}
