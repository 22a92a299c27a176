// A route of the daemon's API: an endpoint declared once (method, path, schemas), which the app registers and
// checks bodies with, the OpenAPI document describes and the client calls, plus the handler that serves it.
import type { HttpBindings } from "@hono/node-server";
import type { Endpoint } from "../../protocol/endpoints.js";
import type { Caller } from "../sessions.js";

export interface RouteContext {
  caller: Caller;
  params: Record<string, string>;
  /** The validated body (undefined for routes without one). */
  body: unknown;
  query(name: string): string | undefined;
  header(name: string): string | undefined;
  request: Request;
  /** The raw Node request and response, for streams. */
  env: HttpBindings;
}

/** An endpoint (src/protocol/endpoints.ts for /v1) and the handler that serves it. */
export interface RouteDef extends Endpoint {
  handle(ctx: RouteContext): Promise<unknown>;
}

/** /v1/sessions/{id} → /v1/sessions/:id (Hono's syntax). */
export function honoPath(path: string): string {
  return path.replace(/\{([^}]+)\}/g, ":$1");
}
