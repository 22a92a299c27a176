// A route without a body schema (a GET, a DELETE, POST .../close, /interrupt, /checkpoints) refuses a body that
// says something. Ignored, a client that sent options there ({"force": true}, {"reason": ...}) would be answered
// as if they had been applied. An empty body, whitespace and {} say nothing, and are taken.
import type { IncomingMessage } from "node:http";
import { Readable } from "node:stream";
import { ApiError, MAX_BODY_BYTES, readText } from "./errors.js";

/** Refuses (400) a request to `route` ("POST /v1/sessions/{id}/close") that sent a body saying something. */
export async function refuseBody(
  route: string,
  request: Request,
  incoming: IncomingMessage | undefined,
  within: (read: () => Promise<string>) => Promise<string>,
): Promise<void> {
  const text = await within(() => sentText(request, incoming));
  if (saysNothing(text)) return;
  throw new ApiError(
    "bad_request",
    `${route} takes no body, and this request sent one (${text.length} characters): nothing was done; send it without a body`,
    "body",
  );
}

function saysNothing(text: string): boolean {
  if (text.trim() === "") return true;
  try {
    const value: unknown = JSON.parse(text);
    return (
      typeof value === "object" && value !== null && !Array.isArray(value) && Object.keys(value).length === 0
    );
  } catch {
    return false;
  }
}

/**
 * The body as text. A GET's is not in the Request (the Fetch API has none for GET), so it is read from the Node
 * request, as far as its headers say there is one: a GET that declares none is not waited on.
 */
async function sentText(request: Request, incoming: IncomingMessage | undefined): Promise<string> {
  if (request.method !== "GET" && request.method !== "HEAD") return request.body ? readText(request) : "";
  const length = request.headers.get("content-length");
  const declared = (length !== null && length !== "0") || request.headers.has("transfer-encoding");
  if (!declared || !incoming || incoming.readableEnded) return "";
  const body = Readable.toWeb(incoming) as ReadableStream<Uint8Array>;
  return readText(
    new Request(request.url, { method: "POST", body, duplex: "half" } as RequestInit),
    MAX_BODY_BYTES,
  );
}
