// The daemon's HTTP app: every route of the table behind the bearer-token check, JSON bodies validated with
// the zod schemas, errors as {error: {code, message, field?}}, the web UI and /openapi.json beside.
import type { HttpBindings } from "@hono/node-server";
import { type Context, Hono, type MiddlewareHandler } from "hono";
import { redactError } from "../core/redact-error.js";
import { callerOf } from "./auth/caller.js";
import { refuseCrossSite, requireJsonBody } from "./auth/origin.js";
import type { TokenTable } from "./auth/tokens.js";
import { ApiError, parseBody, readJson, toApiError, withoutHome } from "./errors.js";
import { isLoopback } from "./loopback.js";
import { methodsByPath } from "./method-not-allowed.js";
import { refuseBody } from "./no-body.js";
import { openApiDocument } from "./openapi.js";
import { honoPath, type RouteDef } from "./routes/route.js";
import type { Caller } from "./sessions.js";
import { DATA_HEADERS, webFile } from "./static.js";
import type { TenantBound } from "./tenant-bound.js";

export interface AppParts {
  routes: RouteDef[];
  /** undefined: no auth (--no-auth on loopback). */
  tokens: TokenTable | undefined;
  version: string;
  /** $BRAIN_HOME (and its real path): error bodies say "$BRAIN_HOME" instead of the machine's path. */
  homes?: string[];
  /** Called with every 5xx, for the daemon's log. */
  onError?: (err: unknown) => void;
  /** The request bodies each tenant may be sending at once (bodyReads). */
  bodies: TenantBound;
  /** Takes every secret the host knows out of an error message before a client sees it. */
  redact?: (text: string) => string;
  /**
   * Takes out of an error message what the caller's session `id` (the route's) redacts beyond the host's secrets:
   * those its harness told it (an extension host's NUI_API_URL token), its own keys and variables.
   */
  redactForSession?: (caller: Caller, id: string, text: string) => string;
  /**
   * Runs before a route's handler, once its caller is known to be allowed (cluster mode: forwarding a command to
   * the session's owner). After the token check, so an unknown caller cannot make this node read or send a body.
   */
  before?: MiddlewareHandler;
}

export type App = Hono<{ Bindings: HttpBindings }>;

export function buildApp(parts: AppParts): App {
  const app: App = new Hono<{ Bindings: HttpBindings }>();
  const redacted = (message: string) => {
    const out = withoutHome(message, parts.homes ?? []);
    return parts.redact ? parts.redact(out) : out;
  };
  const document = openApiDocument(parts.routes, {
    version: parts.version,
    auth: parts.tokens !== undefined,
  });

  app.onError((err, c) => {
    const apiError = toApiError(err);
    if (apiError.status >= 500) parts.onError?.(err);
    const headers: Record<string, string> =
      apiError.code === "unauthorized" ? { "www-authenticate": "Bearer" } : {};
    const body = apiError.body();
    body.error.message = redacted(body.error.message);
    return c.json(body, apiError.status as 400, headers);
  });
  // First, so it sees every answer: the errors and 404s of the handlers and middleware after it too.
  app.use(async (c, next) => {
    await next();
    for (const [name, value] of Object.entries(DATA_HEADERS)) {
      if (!c.res.headers.has(name)) c.res.headers.set(name, value);
    }
  });

  // In auth mode too: a token in a query string (EventSource) could otherwise ride a cross-site form.
  app.use(async (c, next) => {
    refuseCrossSite(c.req.raw);
    await next();
  });

  if (!parts.tokens) {
    // Without tokens, only a loopback Host may call: a web page that rebinds its own name to 127.0.0.1 cannot.
    app.use(async (c, next) => {
      const host = (c.req.header("host") ?? "").replace(/:\d+$/, "");
      if (!isLoopback(host)) {
        throw new ApiError(
          "forbidden",
          `Host "${host}" is refused: without auth only loopback names are served`,
        );
      }
      await next();
    });
  }

  app.get("/healthz", (c) => c.json({ ok: true }));
  app.get("/openapi.json", (c) => c.json(document));
  app.get(
    "/",
    async (c) => (await webFile("index.html")) ?? c.text("the web UI is missing (web/index.html)", 500),
  );
  app.get("/ui/:file", async (c) => (await webFile(c.req.param("file"))) ?? c.notFound());

  for (const route of parts.routes) {
    const allowed = (c: Context): Caller => {
      const caller = callerOf(c.req.raw, new URL(c.req.url), parts.tokens, c.req.param("token"));
      if (route.drive && caller.role === "observer") {
        throw new ApiError(
          "forbidden",
          "an observer may watch, not drive: use a controller token without role=observer",
        );
      }
      requireJsonBody(c.req.raw);
      return caller;
    };
    const checked: MiddlewareHandler = async (c, next) => {
      allowed(c);
      await next();
    };
    const handle = async (c: Context) => {
      const url = new URL(c.req.url);
      const params = c.req.param() as Record<string, string>;
      // Checked again when `before` ran: a token lookup, cheaper than carrying the caller through Hono's context.
      const caller = allowed(c);
      const body = route.body
        ? parseBody(route.body, await parts.bodies.within(caller.tenant, () => readJson(c.req.raw)))
        : await refuseBody(`${route.method} ${route.path}`, c.req.raw, c.env?.incoming, (read) =>
            parts.bodies.within(caller.tenant, read),
          );
      const result = await route
        .handle({
          caller,
          params,
          body,
          query: (name) => url.searchParams.get(name) ?? undefined,
          header: (name) => c.req.header(name),
          request: c.req.raw,
          env: c.env,
        })
        .catch((err: unknown) => {
          // Only the session's redactor knows its secrets; onError redacts the host's, and logs this same error
          // whole (stack, causes, members), so all of it is redacted, not only the message.
          const { id } = params;
          if (id && parts.redactForSession) {
            const redact = parts.redactForSession;
            throw redactError(err, (text) => redact(caller, id, text));
          }
          throw err;
        });
      if (result instanceof Response) return result;
      if (route.status === 204) return c.body(null, 204);
      return c.json(result ?? { ok: true }, (route.status ?? 200) as 200);
    };
    const path = honoPath(route.path);
    if (parts.before) app.on(route.method, path, checked, parts.before, handle);
    else app.on(route.method, path, handle);
  }

  // Once every route is added: the methods a path takes are those its routes were added with.
  const tablePaths = new Set(parts.routes.map((route) => honoPath(route.path)));
  const methodsOf = methodsByPath(app.routes, (path) => tablePaths.has(path));
  // The path may hold a token (a mistyped /nui/TOKEN/... URL): redacted like every other error body.
  app.notFound((c) => {
    const { method, path } = c.req;
    const methods = methodsOf(path);
    // A route's own 404 (a web file that is not there) takes the method; HEAD is answered as GET.
    if (!methods || methods.allow.includes(method)) {
      return c.json(new ApiError("not_found", redacted(`no route ${method} ${path}`)).body(), 404);
    }
    // As for the method the path takes: nothing about the API's routes is told a caller without a valid token.
    if (methods.guarded) callerOf(c.req.raw, new URL(c.req.url), parts.tokens, methods.params.token);
    const allow = methods.allow.join(", ");
    const message = `method ${method} is not allowed on ${path}: it takes ${allow}`;
    return c.json(new ApiError("method_not_allowed", redacted(message)).body(), 405, { allow });
  });
  return app;
}
