// Every failure the API returns is {error: {code, message, field?}} with a status that says whose fault it is.
// Errors from the core (SessionError, StoreError, CheckpointError) map to 4xx when the caller asked for something
// impossible; anything else is a 500 with the host's message.
import type { ZodType } from "zod";
import { CheckpointError } from "../core/checkpoints/index.js";
import { SessionError } from "../core/session.js";
import type { ApiErrorBody, ApiErrorCode } from "../protocol/api.js";
import { LogLockedError, StoreError } from "../store/fs/index.js";

const STATUS: Record<ApiErrorCode, number> = {
  bad_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  brain_error: 500,
};

export class ApiError extends Error {
  override name = "ApiError";
  constructor(
    readonly code: ApiErrorCode,
    message: string,
    readonly field?: string,
  ) {
    super(message);
  }

  get status(): number {
    return STATUS[this.code];
  }

  body(): ApiErrorBody {
    return {
      error: { code: this.code, message: this.message, ...(this.field ? { field: this.field } : {}) },
    };
  }
}

export const notFound = (what: string) => new ApiError("not_found", what);

/** Maps any thrown value to the ApiError the client sees. */
export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  if (err instanceof SessionError) return new ApiError(err.code, err.message);
  // Another process (a `brain run`) has the session open: it is busy, not broken.
  if (err instanceof LogLockedError) return new ApiError("conflict", err.message);
  if (err instanceof StoreError || err instanceof CheckpointError)
    return new ApiError(err.code === "bad_request" ? "bad_request" : "brain_error", err.message);
  const message = err instanceof Error ? err.message : String(err);
  return new ApiError("brain_error", message);
}

/** Validates a parsed JSON body; the first issue names the field and the reason. */
export function parseBody<T>(schema: ZodType<T>, value: unknown): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const field = issue.path.length ? issue.path.join(".") : undefined;
  const reason =
    issue.code === "invalid_type" && issue.message.endsWith("undefined") ? "required" : issue.message;
  const unknownKeys = issue.code === "unrecognized_keys" ? issue.keys : undefined;
  if (unknownKeys) {
    const at = field ? `${field}.` : "";
    const name = `${at}${unknownKeys[0]}`;
    return fail(
      name,
      `unknown field "${name}": remove it (see /openapi.json for the fields this route takes)`,
    );
  }
  return fail(field, field ? `field "${field}": ${reason}` : `body: ${reason}`);
}

function fail(field: string | undefined, message: string): never {
  throw new ApiError("bad_request", message, field);
}

/** Request bodies past this are refused (prompts are text; 8 MiB is far more than any model takes). */
export const MAX_BODY_BYTES = 8 << 20;

/** Parses a request body as JSON; empty means {}. */
export async function readJson(request: Request): Promise<unknown> {
  const tooBig = () =>
    new ApiError("bad_request", `body over ${MAX_BODY_BYTES >> 20} MiB: send less (prompts are text)`);
  if (Number(request.headers.get("content-length") ?? 0) > MAX_BODY_BYTES) throw tooBig();
  const text = await request.text();
  if (text.length > MAX_BODY_BYTES) throw tooBig();
  if (text.trim() === "") return {};
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new ApiError("bad_request", `body is not valid JSON: ${(err as Error).message}`);
  }
}
