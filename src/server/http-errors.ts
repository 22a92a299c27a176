// What the daemon answers to a request node:http refuses before any route sees it (a malformed request line,
// headers over its 16 KiB, a request that arrives too slowly, an Expect it does not meet): the API's JSON error
// shape, with the same security headers, instead of node's bare status lines.
import type { Server } from "node:http";
import type { Duplex } from "node:stream";
import type { ApiErrorBody } from "../protocol/api.js";
import { DATA_HEADERS } from "./static.js";

const REFUSED: Record<string, [status: number, reason: string, message: string]> = {
  HPE_HEADER_OVERFLOW: [431, "Request Header Fields Too Large", "the request's headers are over 16 KiB"],
  ERR_HTTP_REQUEST_TIMEOUT: [408, "Request Timeout", "the request did not arrive in time"],
};
const MALFORMED: [number, string, string] = [400, "Bad Request", "the request is not well-formed HTTP/1.1"];

function errorBody(message: string): string {
  return JSON.stringify({ error: { code: "bad_request", message } } satisfies ApiErrorBody);
}

function headerLines(body: string): string {
  const headers = {
    ...DATA_HEADERS,
    "content-type": "application/json",
    "content-length": String(Buffer.byteLength(body)),
  };
  return Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join("");
}

export function answerHttpErrors(server: Server): void {
  server.on("clientError", (err: NodeJS.ErrnoException, socket: Duplex) => {
    // A peer that went away, or a socket already answered: nothing to say, to no one.
    if (
      err.code === "ECONNRESET" ||
      !socket.writable ||
      (socket as { _httpMessage?: unknown })._httpMessage
    ) {
      socket.destroy();
      return;
    }
    const [status, reason, message] = REFUSED[err.code ?? ""] ?? MALFORMED;
    const body = errorBody(message);
    socket.end(`HTTP/1.1 ${status} ${reason}\r\n${headerLines(body)}connection: close\r\n\r\n${body}`);
  });
  server.on("checkExpectation", (req, res) => {
    const body = errorBody(
      `Expect: ${String(req.headers.expect).slice(0, 100)} is not one this server meets (only 100-continue)`,
    );
    res.writeHead(417, {
      ...DATA_HEADERS,
      "content-type": "application/json",
      "content-length": Buffer.byteLength(body),
    });
    res.end(body);
  });
}
