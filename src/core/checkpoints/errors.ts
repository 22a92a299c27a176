import { BrainError } from "../errors.js";

/**
 * A checkpoint was refused or could not be read back. `brain_error` when the harness's files or the store are
 * at fault, `bad_request` when the caller asked for something impossible (unknown id, non-empty target dir),
 * `insufficient_storage` when the disk is full (as an append the disk refuses: the host's state, not a fault).
 */
export class CheckpointError extends BrainError {
  override name = "CheckpointError";
  constructor(
    code: "brain_error" | "bad_request" | "insufficient_storage",
    message: string,
    /** The native file concerned, when there is one. */
    readonly path?: string,
    /** The caller's input at fault, when it is not the checkpoint (a restore's `into`). */
    field?: string,
  ) {
    super(code, message, field === undefined ? {} : { field });
  }
}

/** The directory a restore was to write cannot be one: the caller's `into` (REST body and CLI flag alike). */
export function targetRefused(message: string): CheckpointError {
  return new CheckpointError("bad_request", `restore refused: ${message}`, undefined, "into");
}

/** A native file broke a rule: the message names the file, the rule, and how to fix it. */
export function refused(path: string, rule: string): CheckpointError {
  return new CheckpointError(
    "brain_error",
    `checkpoint refused: native file ${JSON.stringify(path)}: ${rule}`,
    path,
  );
}

export function errnoCode(err: unknown): string | undefined {
  return err instanceof Error && "code" in err && typeof err.code === "string" ? err.code : undefined;
}

/** Whether the disk (or its quota) is full: the fix is space, and the request passes once there is some. */
export function isDiskFull(code: string | undefined): boolean {
  return code === "ENOSPC" || code === "EDQUOT";
}
