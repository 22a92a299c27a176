// Cluster mode: a command for a session another node owns goes to that node. The daemon serves, for each
// session it has open, the commands that other nodes forward; and forwards to the owner a command for a
// session it does not have open. What carries them (NATS request-reply) is the router's business.
import type { MiddlewareHandler } from "hono";
import type { Brain } from "../core/brain.js";

/** An HTTP request as forwarded: the caller's own credentials go with it, the owner checks them again. */
export interface RoutedRequest {
  method: string;
  /** Path and query string. */
  path: string;
  headers: Record<string, string>;
  body?: string;
}

export interface RoutedResponse {
  status: number;
  contentType?: string;
  body: string;
}

export interface CommandRouter {
  /** Serves the commands other nodes forward for `session` (open here). Returns the stop function. */
  serve(session: string, handle: (request: RoutedRequest) => Promise<RoutedResponse>): () => void;
  /** The owner's answer; undefined when no node serves the session now (it has no live owner). */
  forward(session: string, request: RoutedRequest): Promise<RoutedResponse | undefined>;
}

/** Set on a forwarded request: the node that got it runs it, never forwards it again. */
export const ROUTED = "x-brain-routed";
const FORWARDED_HEADERS = ["authorization", "content-type", "x-brain-client", "x-brain-role"];
const SESSION_COMMAND = /^\/v1\/sessions\/([A-Za-z0-9_-]{1,64})(?:\/|$)/;

/**
 * Forwards a command (any POST or DELETE under /v1/sessions/ID) for a session that is not open here to the node
 * that has it open. Without a live owner the command runs here, which claims the session.
 */
export function forwardToOwner(brain: Brain, router: CommandRouter): MiddlewareHandler {
  return async (c, next) => {
    const method = c.req.method;
    if ((method !== "POST" && method !== "DELETE") || c.req.header(ROUTED)) return next();
    const url = new URL(c.req.url);
    const id = SESSION_COMMAND.exec(url.pathname)?.[1];
    if (!id || brain.liveSession(id)) return next();
    const headers: Record<string, string> = {};
    for (const name of FORWARDED_HEADERS) {
      const value = c.req.header(name);
      if (value !== undefined) headers[name] = value;
    }
    const body = method === "POST" ? await c.req.raw.clone().text() : undefined;
    const answer = await router.forward(id, {
      method,
      path: url.pathname + url.search,
      headers,
      ...(body ? { body } : {}),
    });
    if (!answer) return next();
    return new Response(answer.body || null, {
      status: answer.status,
      headers: answer.contentType ? { "content-type": answer.contentType } : {},
    });
  };
}

/** Runs a forwarded request on this node's own app, as if its client had called here. */
export function runHere(
  app: { request(path: string, init: RequestInit): Response | Promise<Response> },
  request: RoutedRequest,
): Promise<RoutedResponse> {
  return Promise.resolve(
    app.request(request.path, {
      method: request.method,
      // The loopback Host a no-auth daemon requires; the caller's token is checked as usual.
      headers: { ...request.headers, host: "127.0.0.1", [ROUTED]: "1" },
      ...(request.body !== undefined ? { body: request.body } : {}),
    }),
  ).then(async (res) => ({
    status: res.status,
    body: await res.text(),
    ...(res.headers.get("content-type") ? { contentType: res.headers.get("content-type")! } : {}),
  }));
}
