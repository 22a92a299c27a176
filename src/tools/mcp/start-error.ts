// Why an MCP server did not start, as its `tool.service` event and the session's warning say it. Over HTTP, "nothing
// answers" was said for any failed fetch: a server that is down, a TLS mismatch, a reset halfway through the
// handshake and a refusal all read alike, and none said what to do. undici keeps what happened in the error's cause
// (core/fetch-failure.ts), and a refusal carries its HTTP status: the message names both, and what to check.
import { SseError } from "@modelcontextprotocol/sdk/client/sse.js";
import { fetchFailure } from "../../core/fetch-failure.js";
import type { ServerSpec } from "./connection.js";

/** What went wrong starting `spec`'s server, for a user to act on. `fetchFailed` is the first fetch that threw. */
export function startError(spec: ServerSpec, err: unknown, fetchFailed?: unknown): string {
  const e = err as NodeJS.ErrnoException | undefined;
  if (e?.code === "ENOENT" && spec.config.command) {
    return `could not start "${spec.config.command}": no such command (is it installed and on PATH?)`;
  }
  const url = spec.config.url;
  if (url !== undefined) {
    const status = httpStatus(err);
    if (status !== undefined) return refusal(url, status, err);
    // The SSE transport's error keeps only the text of fetch's failure, not its cause: the fetch itself has it.
    const failed = err instanceof SseError ? fetchFailed : err;
    if (isFetchFailure(failed)) return unreachable(url, failed);
  }
  return e instanceof Error ? e.message : String(err);
}

/** The HTTP status a transport's error carries (StreamableHTTPError's and SseError's `code`), if any. */
function httpStatus(err: unknown): number | undefined {
  const code = (err as { code?: unknown } | undefined)?.code;
  return typeof code === "number" && code >= 100 && code <= 599 ? code : undefined;
}

/** fetch's own failure: "fetch failed", with what happened as its cause. */
function isFetchFailure(err: unknown): boolean {
  const e = err as { message?: unknown; cause?: unknown } | undefined;
  return e?.message === "fetch failed" && e.cause !== undefined;
}

function causeCode(err: unknown): string | undefined {
  const code = (err as { cause?: { code?: unknown } } | undefined)?.cause?.code;
  return typeof code === "string" ? code : undefined;
}

function refusal(url: string, status: number, err: unknown): string {
  // The streamable transport's message holds the body the server sent (cut at a few KiB by http-limits.ts); SSE's
  // holds none.
  const said = (err as Error).message.match(/^Streamable HTTP error: Error POSTing to endpoint: (.*)$/s)?.[1];
  const body = said?.trim() ? `: ${said.trim()}` : "";
  const hint =
    status === 401 || status === 403
      ? "it refused Brain's credentials: check the Authorization (or API key) header in the server's headers"
      : status === 404
        ? 'nothing is served at that path: check the URL\'s path (usually /mcp; /sse with type "sse")'
        : status === 405 || status === 406 || status === 415
          ? 'it does not take MCP\'s streamable HTTP there: check the URL, or set type "sse" for a server that speaks only the older SSE transport'
          : status >= 500
            ? "the server failed at initialize: its own log says why"
            : "check the URL and the server's headers";
  return `${url} answered HTTP ${status}${body}; ${hint}`;
}

function unreachable(url: string, err: unknown): string {
  const code = causeCode(err) ?? "";
  const why = fetchFailure(err);
  if (code === "ECONNREFUSED")
    return `nothing listens at ${url}: the connection was refused (${why}); is the server running, on that host and port?`;
  if (code === "ENOTFOUND" || code === "EAI_AGAIN")
    return `the host of ${url} was not found (${why}); check the URL's host name and this machine's DNS`;
  if (code === "EHOSTUNREACH" || code === "ENETUNREACH")
    return `the host of ${url} cannot be reached (${why}); check the network between this machine and it`;
  if (code === "UND_ERR_CONNECT_TIMEOUT" || code === "ETIMEDOUT")
    return `connecting to ${url} timed out (${why}); is the host up, and does a firewall let Brain through?`;
  if (/^ERR_(SSL|TLS)_|CERT|^UNABLE_TO_/.test(code))
    return `the TLS handshake with ${url} failed (${why}); check that the server speaks HTTPS (an http:// URL for one that does not) and that its certificate is valid and trusted (NODE_EXTRA_CA_CERTS names a private CA)`;
  if (code === "ECONNRESET" || code === "UND_ERR_SOCKET" || code === "EPIPE")
    return `${url} closed the connection before it answered Brain's initialize (${why}); is it an MCP server (type "sse" for one that speaks only the older SSE transport)? Its own log may say why`;
  // fetch refuses some ports outright (those browsers block, such as 6000): the request never left.
  if ((err as { cause?: { message?: unknown } }).cause?.message === "bad port")
    return `fetch does not connect to the port of ${url}, one that browsers block (${why}); serve the server on another port`;
  return `could not reach ${url} (${why})`;
}
