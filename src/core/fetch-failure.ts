// What went wrong when fetch failed. Node's fetch (undici's) says only "fetch failed" and keeps what happened in
// its `cause`: a reset connection, a refused one, a timeout. An error a user or a model reads must name it, or
// nobody can tell a server that is down from one that dropped a call halfway.

/**
 * `err`'s message, with the cause behind a bare "fetch failed": its code, and its message when that says more
 * than the code ("fetch failed (ECONNREFUSED)", "fetch failed (UND_ERR_SOCKET: other side closed)").
 */
export function fetchFailure(err: unknown): string {
  const e = err as { message?: string; cause?: { code?: unknown; message?: unknown } } | undefined;
  const message = e?.message ?? String(err);
  const code = typeof e?.cause?.code === "string" ? e.cause.code : undefined;
  const said = typeof e?.cause?.message === "string" ? e.cause.message : undefined;
  // "connect ECONNREFUSED 127.0.0.1:9" says no more than its code.
  const cause = code && said && !said.includes(code) ? `${code}: ${said}` : (code ?? said);
  return cause ? `${message} (${cause})` : message;
}

/**
 * Whether fetch failed before the request reached anyone (nothing listens, no such host, a port fetch will not
 * connect to): it was not sent.
 */
export function neverSent(err: unknown): boolean {
  const cause = (err as { cause?: { code?: unknown; message?: unknown } } | undefined)?.cause;
  // fetch refuses the ports browsers block (1, 6000, ...) before it connects, with no code.
  return (typeof cause?.code === "string" && NOT_CONNECTED.has(cause.code)) || cause?.message === "bad port";
}

const NOT_CONNECTED = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH"]);
