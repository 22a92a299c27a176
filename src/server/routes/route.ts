// A route of the daemon's API, declared once: the app registers it, checks its body with `body`, and the OpenAPI
// document describes it from the same fields.
import type { HttpBindings } from "@hono/node-server";
import type { ZodType } from "zod";
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

export interface RouteDef {
  method: "GET" | "POST" | "DELETE";
  /** OpenAPI style: /v1/sessions/{id}. */
  path: string;
  summary: string;
  tag: string;
  body?: ZodType;
  response?: ZodType;
  /** Success status (default 200). */
  status?: 200 | 201 | 202 | 204;
  /** Drives a session (prompt, answer, ...): refused to observers. */
  drive?: boolean;
  /** Serves text/event-stream instead of JSON. */
  stream?: boolean;
  query?: Record<string, string>;
  headers?: Record<string, string>;
  handle(ctx: RouteContext): Promise<unknown>;
}

/** /v1/sessions/{id} → /v1/sessions/:id (Hono's syntax). */
export function honoPath(path: string): string {
  return path.replace(/\{([^}]+)\}/g, ":$1");
}
