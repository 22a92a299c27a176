// What the daemon answered when it said no: its status, error code, message, the field at fault and, for a
// refusal a client acts on, its reason (ApiErrorBody in src/protocol/api.ts).
import type { ApiErrorBody } from "../protocol/api.js";

/** Why the daemon refused, beyond its code: `reason` "controlled" names the `controller` holding the session. */
export type ClientErrorDetail = Pick<ApiErrorBody["error"], "reason" | "controller">;

export class ClientError extends Error {
  override name = "ClientError";
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly field?: string,
    readonly detail: ClientErrorDetail = {},
  ) {
    super(message);
  }
}

export function errorOf(status: number, text: string): ClientError {
  try {
    const body = JSON.parse(text) as { error?: Partial<Record<keyof ApiErrorBody["error"], unknown>> };
    const error = body.error;
    if (error && typeof error.message === "string" && error.message) {
      const detail: ClientErrorDetail = {};
      // Read as the daemon sends them; a reason this client does not know is left out, not guessed at.
      if (error.reason === "controlled") detail.reason = error.reason;
      if (typeof error.controller === "string") detail.controller = error.controller;
      const code = typeof error.code === "string" ? error.code : "error";
      const field = typeof error.field === "string" ? error.field : undefined;
      return new ClientError(status, code, error.message, field, detail);
    }
  } catch {}
  return new ClientError(status, "error", `HTTP ${status}: ${text.slice(0, 200)}`);
}

/**
 * fetch, given up when no response headers come within `ms` (undefined or 0: Node's own 300 s): a daemon that
 * accepts connections and never answers (hung, stopped with SIGSTOP) would leave the caller silent that long.
 * Only the headers are timed: a body, such as an event stream, may take as long as it takes.
 */
export async function fetchAnswered(
  url: string,
  init: RequestInit,
  ms: number | undefined,
  unanswered: (seconds: number) => string,
): Promise<Response> {
  if (!ms) return fetch(url, init);
  const timer = new AbortController();
  const signal = init.signal ? AbortSignal.any([init.signal, timer.signal]) : timer.signal;
  const timeout = setTimeout(() => timer.abort(), ms);
  try {
    return await fetch(url, { ...init, signal });
  } catch (err) {
    if (timer.signal.aborted && !init.signal?.aborted) {
      throw new ClientError(0, "timeout", unanswered(ms / 1000));
    }
    throw err;
  } finally {
    clearTimeout(timeout);
  }
}

/** What a request that got no answer says: the address, and what to do (BRAIN_SERVER_TIMEOUT is the CLI's). */
export function unansweredMessage(url: string, what: string, seconds: number): string {
  return `the daemon at ${url} took the connection but sent no answer to ${what} in ${seconds} s: is \`brain serve\` there hung? Restart it, or for a slow one raise $BRAIN_SERVER_TIMEOUT (seconds; 0 leaves Node's own 300 s)`;
}
