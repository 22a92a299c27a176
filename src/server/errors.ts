// Every failure the API returns is {error: {code, message, field?}} with a status that says whose fault it is.
// Errors from the core (and the store and tools under it) carry a code and map by it alone, never by their
// message: 4xx when the caller asked for something impossible; anything else is a 500 with the host's message.
import type { ZodType, z } from "zod";
import { BrainError, type BrainErrorCode } from "../core/errors.js";
import type { ApiErrorBody, ApiErrorCode } from "../protocol/api.js";

const STATUS: Record<ApiErrorCode, number> = {
  bad_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  // draft-ietf-httpapi-idempotency-key-header, "Error Scenarios": a key reused with a different request payload is
  // 422 (the client must change its request: a new key), where 409 is kept for a request under the key still in
  // progress (the same request sent again later gets its answer).
  idempotency_key_reused: 422,
  payload_too_large: 413,
  unsupported_media_type: 415,
  brain_error: 500,
  unavailable: 503,
  pinned: 409,
  limit_reached: 429,
  // RFC 4918's "unable to store the representation needed to complete the request", as WebDAV and object stores
  // answer a full disk: the host's condition (5xx, not the caller's), and one that passes once space is freed.
  insufficient_storage: 507,
};

/** What a refusal says beyond its code and message, for clients to act on (ApiErrorBody's reason and its data). */
export type ApiErrorDetail = Pick<ApiErrorBody["error"], "reason" | "controller">;

export class ApiError extends Error {
  override name = "ApiError";
  constructor(
    readonly code: ApiErrorCode,
    message: string,
    readonly field?: string,
    readonly detail?: ApiErrorDetail,
  ) {
    super(message);
  }

  get status(): number {
    return STATUS[this.code];
  }

  body(): ApiErrorBody {
    return {
      error: {
        code: this.code,
        message: this.message,
        ...(this.field ? { field: this.field } : {}),
        ...this.detail,
      },
    };
  }
}

export const notFound = (what: string) => new ApiError("not_found", what);

const FROM_CORE: Record<BrainErrorCode, ApiErrorCode> = {
  bad_request: "bad_request",
  not_found: "not_found",
  conflict: "conflict",
  // Another process (a `brain run`) has the session open: it is busy, not broken.
  locked: "conflict",
  payload_too_large: "payload_too_large",
  pinned: "pinned",
  limit_reached: "limit_reached",
  insufficient_storage: "insufficient_storage",
  brain_error: "brain_error",
};

/** Maps any thrown value to the ApiError the client sees. */
export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  if (err instanceof BrainError) return new ApiError(FROM_CORE[err.code], err.message, err.field);
  const message = err instanceof Error ? err.message : String(err);
  return new ApiError("brain_error", message);
}

/** A core error of the caller's making, with `field` named when the core did not name one itself. */
export function inField(err: unknown, field: string): unknown {
  if (err instanceof BrainError && err.code === "bad_request" && err.field === undefined)
    return new ApiError("bad_request", err.message, field);
  return err;
}

/** Validates a parsed JSON body (or query: `kind`); the first issue names the field and the reason. */
export function parseBody<T>(schema: ZodType<T>, value: unknown, kind = "field"): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const first = parsed.error.issues[0]!;
  const issue = (first.code === "invalid_union" && sentFieldIssue(first, value)) || first;
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
  return fail(field, field ? `${kind} "${field}": ${reason}` : `body: ${reason}`);
}

/**
 * Of a union's branches (an answer's {decision} or {answer}), the issue with a field the client sent: what it got
 * wrong there, rather than the union's own message, which names no field.
 */
function sentFieldIssue(union: z.core.$ZodIssueInvalidUnion, value: unknown): z.core.$ZodIssue | undefined {
  let at: unknown = value;
  for (const key of union.path) at = (at as Record<PropertyKey, unknown> | undefined)?.[key];
  if (typeof at !== "object" || at === null) return undefined;
  for (const branch of union.errors) {
    for (const issue of branch) {
      const [key] = issue.path;
      if (issue.code !== "unrecognized_keys" && key !== undefined && Object.hasOwn(at, key)) {
        return { ...issue, path: [...union.path, ...issue.path] };
      }
    }
  }
  return undefined;
}

function fail(field: string | undefined, message: string): never {
  throw new ApiError("bad_request", message, field);
}

/** Request bodies past this are refused (prompts are text; 8 MiB is far more than any model takes). */
export const MAX_BODY_BYTES = 8 << 20;
/** JSON nested deeper than this is refused: nothing the API takes needs it, and deep values overflow stacks. */
export const MAX_BODY_DEPTH = 64;

/** Parses a request body as JSON; empty means {}. At most `limit` bytes are read (readText). */
export async function readJson(request: Request, limit = MAX_BODY_BYTES): Promise<unknown> {
  const text = await readText(request, limit);
  if (text.trim() === "") return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new ApiError("bad_request", `body is not valid JSON: ${(err as Error).message}`);
  }
  checkDepth(value);
  return value;
}

/**
 * A request body as text, refused (400) unless it is valid UTF-8. The size is counted as the bytes arrive, so a
 * body without Content-Length is refused (413) once it passes the limit instead of being buffered whole.
 */
export async function readText(request: Request, limit = MAX_BODY_BYTES): Promise<string> {
  const tooBig = () =>
    new ApiError("payload_too_large", `body over ${limit >> 20} MiB: send less (prompts are text)`);
  if (Number(request.headers.get("content-length") ?? 0) > limit) throw tooBig();
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (request.body) {
    const reader = request.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > limit) {
        // Not awaited: a clone's cancel (one branch of a tee) settles only once the other branch is cancelled too.
        reader.cancel().catch(() => {});
        throw tooBig();
      }
      chunks.push(value);
    }
  }
  // Decoded strictly: a lenient decode would put U+FFFD where the client's bytes were and take the request, so a
  // prompt (or any field) would be stored as something the client never sent. JSON text is UTF-8 (RFC 8259).
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(Buffer.concat(chunks, size));
  } catch {
    throw new ApiError(
      "bad_request",
      "body is not valid UTF-8: send JSON text encoded as UTF-8 (escape other bytes, e.g. as base64)",
    );
  }
}

/** Walks the value without recursion (a deep one is what would overflow the stack). */
function checkDepth(root: unknown): void {
  const stack: { value: unknown; path: string[] }[] = [{ value: root, path: [] }];
  while (stack.length > 0) {
    const { value, path } = stack.pop()!;
    if (value === null || typeof value !== "object") continue;
    if (path.length >= MAX_BODY_DEPTH) {
      const field = path.slice(0, 3).join(".");
      throw new ApiError(
        "bad_request",
        `body nests deeper than ${MAX_BODY_DEPTH} levels (under "${field}"): flatten it`,
        field,
      );
    }
    for (const [key, child] of Object.entries(value)) stack.push({ value: child, path: [...path, key] });
  }
}

/** The message with every mention of the daemon's home replaced: remote clients need not know its paths. */
export function withoutHome(message: string, homes: readonly string[]): string {
  let out = message;
  for (const home of homes) if (home.length > 1) out = out.split(home).join("$BRAIN_HOME");
  return out;
}
