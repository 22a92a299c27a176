// Browsers attach Origin (and Sec-Fetch-Site) to cross-site requests, and a web page may send a "simple"
// cross-site POST (text/plain, no preflight) to any address, loopback included. State-changing requests from
// another site are refused; same-origin ones (the web UI) and clients that send neither header (the CLI, curl,
// nui's SDK) pass.
import { ApiError } from "../errors.js";

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

export function refuseCrossSite(request: Request): void {
  if (SAFE_METHODS.has(request.method)) return;
  const site = request.headers.get("sec-fetch-site");
  if (site !== null && site !== "same-origin" && site !== "none") {
    throw new ApiError(
      "forbidden",
      `cross-site request refused (Sec-Fetch-Site: ${site}): only the daemon's own pages and non-browser clients may change state`,
    );
  }
  const origin = request.headers.get("origin");
  if (origin === null) return;
  const host = (request.headers.get("host") ?? new URL(request.url).host).toLowerCase();
  if (originHost(origin) !== host) {
    throw new ApiError(
      "forbidden",
      `cross-site request refused (Origin: ${origin.slice(0, 200)}): only the daemon's own pages and non-browser clients may change state`,
    );
  }
}

function originHost(origin: string): string | undefined {
  try {
    const url = new URL(origin);
    return url.protocol === "http:" || url.protocol === "https:" ? url.host.toLowerCase() : undefined;
  } catch {
    return undefined;
  }
}

/** A body must say it is JSON: a form or text/plain body is what a cross-site page can send without asking. */
export function requireJsonBody(request: Request): void {
  const length = request.headers.get("content-length");
  const hasBody = (length !== null && length !== "0") || request.headers.has("transfer-encoding");
  const type = (request.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
  // A declared type is checked even without a body: it says what the client would send.
  if (!hasBody && type === "") return;
  if (type !== "application/json") {
    throw new ApiError(
      "unsupported_media_type",
      `request bodies must be JSON sent as "Content-Type: application/json", not ${type ? `"${type}"` : "without a Content-Type"}`,
    );
  }
}
