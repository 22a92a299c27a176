// Cluster mode: a command for a session another node owns goes to that node. The daemon serves, for each
// session it has open, the commands that other nodes forward; and forwards to the owner a command for a
// session it does not have open. What carries them (NATS request-reply) is the router's business.
import { randomUUID } from "node:crypto";
import type { Context, MiddlewareHandler, Next } from "hono";
import type { Brain } from "../core/brain.js";
import type { HitlResponseEnvelope } from "../protocol/nui/hitl.js";
import type { RoutedRequest, RoutedResponse } from "../protocol/routed.js";
import { DEFAULT_TENANT } from "./auth/tokens.js";
import { ApiError, notFound, readText } from "./errors.js";
import { HITL_LIST, merged, responseOf } from "./hitl/cluster-list.js";
import { listedInStoredLog, pendingInStoredLog, storedAlone } from "./hitl/cluster-read.js";
import { waitInStoredLog } from "./hitl/cluster-wait.js";
import { pendingInSeveral } from "./hitl/service.js";
import type { TenantBound } from "./tenant-bound.js";

export type { RoutedRequest, RoutedResponse };

export interface ForwardOptions {
  /** The request carries an Idempotency-Key: it may be sent again when the owner does not answer in time. */
  retry?: boolean;
}

export interface CommandRouter {
  /** Serves the commands other nodes forward for `session` (open here). Returns the stop function. */
  serve(session: string, handle: (request: RoutedRequest) => Promise<RoutedResponse>): () => void;
  /** The owner's answer; undefined when no node serves the session now (it has no live owner). */
  forward(
    session: string,
    request: RoutedRequest,
    options?: ForwardOptions,
  ): Promise<RoutedResponse | undefined>;
  /**
   * Answers, for a HITL request id pending on this node in a session of `tenant`, its session (`find` returns
   * undefined for the others, which this node leaves to the node that has them). Returns the stop function.
   */
  serveLocate(find: (requestId: string, tenant: string | undefined) => string | undefined): () => void;
  /**
   * The session of `tenant` a HITL request is pending in, on whichever node; undefined when it is pending in none
   * of that tenant's sessions (request ids are the client's: another tenant may use the same).
   */
  locate(requestId: string, tenant: string): Promise<string | undefined>;
  /** Every session of `tenant` the request is pending in, on any node (nodes answering within a bounded time). */
  locateAll?(requestId: string, tenant: string): Promise<string[]>;
  /**
   * Serves the reads every node answers for itself (a tenant's HITL requests pending here): `handle` runs the
   * request as its caller, whose token this node checks. Returns the stop function.
   */
  serveGather?(handle: (request: RoutedRequest) => Promise<RoutedResponse>): () => void;
  /** Every node's answer to `request` (this one's too) that came within a bounded time; [] when none did. */
  gather?(request: RoutedRequest): Promise<RoutedResponse[]>;
  /** This node's name, when it can be sent commands by name. */
  readonly node?: string | undefined;
  /** Serves the commands sent to this node by name. Returns the stop function. */
  serveNode?(handle: (request: RoutedRequest) => Promise<RoutedResponse>): () => void;
  /** The named node's answer; undefined when it is not running. */
  toNode?(node: string, request: RoutedRequest): Promise<RoutedResponse | undefined>;
}

/**
 * Set, in the request's bindings, on a forwarded request: the node that got it runs it, never forwards it again.
 * Bindings, not a header: a client's header would have made a node run a command for a session another node owns,
 * past the owner's checks (a handoff of a session mid-turn), and only an in-process call sets bindings.
 */
const ROUTED = "brainRouted";
const KEY = "idempotency-key";
const FORWARDED_HEADERS = ["authorization", "content-type", "x-brain-client", "x-brain-role", KEY];
const SESSION_COMMAND = /^\/v1\/sessions\/([A-Za-z0-9_-]{1,64})(?:\/|$)/;
/** The commands that take an Idempotency-Key (src/protocol/endpoints.ts): safe to send again. */
const KEYED_COMMAND =
  /^\/v1\/sessions\/[A-Za-z0-9_-]{1,64}\/(?:prompt|steer|interrupt|checkpoints|close|control|fork|handoff|rebuild|restore|requests\/[^/]+)$/;
/**
 * A restore writes into a directory of the machine of the node asked, which reads the checkpoint from the store
 * itself: forwarded to the owner, it filled that directory on another machine and answered 200.
 */
const RESTORE = /^\/v1\/sessions\/[A-Za-z0-9_-]{1,64}\/restore$/;
const HITL_WAIT = /^(?:\/nui\/[^/]+)?\/api\/hitl\/requests\/([^/]+)\/wait$/;
/** whereAlone's answer for a request pending in a session open on this node. */
const HERE = Symbol("here");
/** nui's HITL answers (respond, cancel): by request id, on whichever node has the request pending. */
const HITL_ANSWER = /^(?:\/nui\/[^/]+)?\/api\/hitl\/requests\/([^/]+?)(?:\/respond)?$/;

export interface ForwardParts {
  brain: Brain;
  router: CommandRouter;
  /** Runs a request on this node's app, as a forwarded one (never forwarded again). */
  runHere(request: RoutedRequest): Promise<RoutedResponse>;
  /** Whether a HITL request with this id is pending in a session of `tenant` open here. */
  pendingHere(requestId: string, tenant: string): boolean;
  /** The caller's tenant (its token already checked). */
  tenantOf(c: Context): string;
  /** The request bodies each tenant may be sending at once: a body forwarded is read here first. */
  bodies: TenantBound;
  /** The commands each tenant may have waiting on an owner at once (a frozen one is tried until its lease ends). */
  forwards: TenantBound;
  /** The HITL waits each tenant may hold at once (hitlWaits): a wait for a request pending elsewhere is one. */
  waits: TenantBound;
}

/**
 * Forwards a command (any POST or DELETE under /v1/sessions/ID) for a session that is not open here to the node
 * that has it open. Without a live owner the command runs here, which claims the session. A command that takes
 * an Idempotency-Key gets one when its client sent none, so that trying a frozen owner again, and then running
 * it here, cannot run it twice.
 */
export function forwardToOwner(parts: ForwardParts): MiddlewareHandler {
  const { brain, router } = parts;
  return async (c, next) => {
    const method = c.req.method;
    if (isRouted(c)) return next();
    const waited = method === "GET" ? HITL_WAIT.exec(c.req.path)?.[1] : undefined;
    if (waited !== undefined) return waitElsewhere(c, next, decoded(waited));
    // nui's tenant-wide list: each node holds the requests pending in the sessions it has open.
    if (method === "GET" && HITL_LIST.test(c.req.path) && !c.req.query("sessionId") && router.gather) {
      const release = parts.forwards.take(parts.tenantOf(c));
      try {
        const url = new URL(c.req.url);
        const answers = await router.gather({
          method,
          path: url.pathname + url.search,
          headers: headersOf(c),
        });
        if (answers.length > 0) return merged(answers);
      } finally {
        release();
      }
      return next();
    }
    // nui's list of a session's HITL requests, or one request: only its owner has them pending (a read).
    const listed = method === "GET" && HITL_LIST.test(c.req.path) ? c.req.query("sessionId") : undefined;
    const one = method === "GET" && !listed ? hitlAnswerId(method, c.req.path) : undefined;
    if (listed ? !brain.liveSession(listed) : one !== undefined) {
      const headers = headersOf(c);
      const url = new URL(c.req.url);
      // Its caller known and allowed first (401 here, not on the owner), and counted as any forward is.
      const tenant = parts.tenantOf(c);
      const named = listed ?? c.req.query("sessionId");
      if (named && brain.liveSession(named)) return next();
      const release = parts.forwards.take(tenant);
      try {
        const session = named || (await whereAlone(one!, tenant));
        if (session === HERE) return next();
        const request = { method, path: url.pathname + url.search, headers };
        // A read changes nothing: an owner that holds the session but did not answer in time (slow, or frozen
        // within its lease) is read for from the stored log, as one that no longer holds it is, not a 503.
        const answer = session ? await router.forward(session, request).catch(unanswered) : undefined;
        if (answer) return responseOf(answer);
        // A session no node owns now (its owner frozen past its lease, or gone): its stored log has its requests.
        if (listed) {
          const runId = c.req.query("runId");
          const stored = await parts.waits.within(tenant, () =>
            listedInStoredLog(brain, tenant, listed, runId),
          );
          return storedRead(stored);
        }
        // One request no node answered for (its owner frozen, answering no lookup, or gone): the store's log may
        // have it pending. That lookup reads the store's list and logs: under the tenant's wait bound, as a wait's.
        const stored = await parts.waits.within(tenant, () =>
          pendingInStoredLog(brain, tenant, session, one!),
        );
        return stored ? storedRead(stored) : next();
      } finally {
        release();
      }
    }
    if (method !== "POST" && method !== "DELETE") return next();
    let release: (() => void) | undefined;
    try {
      return await route(c, next, () => {
        release ??= parts.forwards.take(parts.tenantOf(c));
      });
    } finally {
      release?.();
    }
  };

  /**
   * The one session of `tenant` a request id is pending in, on any node: HERE when that is this node's, undefined
   * when none; 409 when several are (ids are the askers': which one was meant is not guessed).
   */
  async function whereAlone(requestId: string, tenant: string): Promise<string | typeof HERE | undefined> {
    const where = router.locateAll ? await router.locateAll(requestId, tenant) : undefined;
    if (where && where.length > 1) throw pendingInSeveral(requestId, where);
    if (parts.pendingHere(requestId, tenant)) return HERE;
    return where ? where[0] : router.locate(requestId, tenant);
  }

  /**
   * nui's wait for a request of a session another node owns: read from the session's durable log until it holds
   * the answer, so an owner frozen, or closing the session once it is answered, does not end it. A request pending
   * here, or pending nowhere and in no session named, is this node's to answer.
   */
  async function waitElsewhere(c: Context, next: Next, requestId: string): ReturnType<MiddlewareHandler> {
    const tenant = parts.tenantOf(c);
    const named = c.req.query("sessionId");
    if (named && brain.liveSession(named)) return next();
    // Given back before a wait that runs here (next()), which takes its own place: held through it, one local
    // wait took two, and a tenant could hold half the waits its limit says.
    const release = parts.waits.take(tenant);
    let answer: HitlResponseEnvelope | undefined;
    try {
      const session =
        named || (await whereAlone(requestId, tenant)) || (await storedAlone(brain, tenant, requestId));
      if (session !== undefined && session !== HERE) {
        answer = await waitInStoredLog(brain, tenant, session, requestId, c.req.raw.signal);
      }
    } finally {
      release();
    }
    return answer ? Response.json(answer) : next();
  }

  /** `waiting()` takes one of the tenant's places before anything is sent to another node. */
  async function route(c: Context, next: Next, waiting: () => void): ReturnType<MiddlewareHandler> {
    const method = c.req.method;
    const url = new URL(c.req.url);
    // The path as routed, %-escapes decoded: matched against the raw one, /v1/%73essions/ID/prompt ran here.
    const path = c.req.path;
    // Read only for a request that leaves this node: the body is read again by the route that runs here.
    const routed = async (): Promise<RoutedRequest> => {
      waiting();
      const headers = headersOf(c);
      // The same limit as a body read here (413 past it): what the owner would refuse is not buffered first.
      const body =
        method === "POST"
          ? await parts.bodies.within(parts.tenantOf(c), () => readText(c.req.raw.clone()))
          : undefined;
      return { method, path: url.pathname + url.search, headers, ...(body ? { body } : {}) };
    };

    const hitl = hitlAnswerId(method, path);
    if (hitl !== undefined) {
      const tenant = parts.tenantOf(c);
      // An answer naming its session (the id is pending in several) goes to that session's owner, as a command.
      const named = url.searchParams.get("sessionId");
      // Ids are the askers': pending in sessions on two nodes, an answer naming none must not go to a guessed one.
      const where = !named && router.locateAll ? await router.locateAll(hitl, tenant) : undefined;
      if (where && where.length > 1) throw pendingInSeveral(hitl, where);
      if (named ? brain.liveSession(named) : parts.pendingHere(hitl, tenant)) return next();
      // nui's answer names only the request: find its session, then it goes to the owner like any command. No
      // node has it pending (its owner died, or is frozen and answers no lookup): its session's stored log may.
      const session =
        named ||
        (where ? where[0] : await router.locate(hitl, tenant)) ||
        // The stored lookup reads the store's list and logs: under the tenant's wait bound, as a wait's.
        (await parts.waits.within(tenant, () => storedAlone(brain, tenant, hitl)));
      if (!session) return next();
      const request = await routed();
      const answer = await router
        .forward(session, request)
        .catch((err: unknown) => ownersFailure(brain, session, tenant, err));
      if (answer) return responseOf(answer);
      // No node owns it: it is answered here, naming its session, which opens it here as /v1 answers do.
      if (named) return next();
      const path = new URL(request.path, "http://x");
      path.searchParams.set("sessionId", session);
      return responseOf(await parts.runHere({ ...request, path: path.pathname + path.search }));
    }

    const id = SESSION_COMMAND.exec(path)?.[1];
    if (!id || brain.liveSession(id) || (method === "POST" && RESTORE.test(path))) return next();
    const request = await routed();
    // A delete is safe to send again only under its client's key (its tombstone): an unkeyed one gets none.
    const keyedDelete = method === "DELETE" && request.headers[KEY] !== undefined;
    const retry = (method === "POST" && KEYED_COMMAND.test(path)) || keyedDelete;
    if (retry && request.headers[KEY] === undefined) request.headers[KEY] = `fwd-${randomUUID()}`;
    const answer =
      (await router
        .forward(id, request, { retry })
        .catch((err: unknown) => ownersFailure(brain, id, parts.tenantOf(c), err))) ??
      (await toPinnedNode(brain, router, id, request));
    if (answer) return responseOf(answer);
    // Run here with the key the owner may have seen: the log tells whether it ran there before it went away.
    return retry ? responseOf(await parts.runHere(request)) : next();
  }
}

/**
 * A session pinned to another node (its harness cannot move) that no node has open goes to that node, which
 * opens it; undefined when it is pinned to none, or to a node that is not running (this one then refuses it).
 */
async function toPinnedNode(
  brain: Brain,
  router: CommandRouter,
  id: string,
  request: RoutedRequest,
): Promise<RoutedResponse | undefined> {
  if (!router.toNode) return undefined;
  const node = (await brain.record(id).catch(() => undefined))?.pinned?.node;
  if (!node || node === router.node) return undefined;
  return router.toNode(node, request);
}

/**
 * An owner's failure to answer (a 503 naming the session and its owner node) is the caller's to hear only when the
 * session is the caller's: another tenant's, or none, is the 404 any missing session gets, so a valid token cannot
 * probe which ids exist and where. Read here, on the failure's path, not before every forward.
 */
async function ownersFailure(brain: Brain, id: string, tenant: string, err: unknown): Promise<never> {
  if (err instanceof ApiError && err.code === "unavailable") {
    const record = await brain.record(id).catch(() => undefined);
    if (!record || (record.tenant ?? DEFAULT_TENANT) !== tenant) throw notFound(`no session "${id}"`);
  }
  throw err;
}

/** An owner's silence to a read forwarded to it (503: it still holds the session): no answer, read elsewhere. */
function unanswered(err: unknown): undefined {
  if (err instanceof ApiError && err.code === "unavailable") return undefined;
  throw err;
}

/** A HITL read answered from the session's stored log, not by its owner: its header says so. */
function storedRead(body: unknown): Response {
  return Response.json(body, { headers: { "x-brain-read-from": "stored-log" } });
}

/** The request id of a nui HITL answer (POST .../respond or DELETE), or undefined for any other request. */
function hitlAnswerId(method: string, path: string): string | undefined {
  const pathname = new URL(path, "http://x").pathname;
  const id = HITL_ANSWER.exec(pathname)?.[1];
  if (id === undefined || pathname.endsWith("/respond") !== (method === "POST")) return undefined;
  return decoded(id);
}

function decoded(id: string): string {
  try {
    return decodeURIComponent(id);
  } catch {
    throw new ApiError(
      "bad_request",
      "the request id in the path has a malformed %-escape: percent-encode it as UTF-8 (encodeURIComponent)",
      "requestId",
    );
  }
}

function headersOf(c: Context): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const name of FORWARDED_HEADERS) {
    const value = c.req.header(name);
    if (value !== undefined) headers[name] = value;
  }
  return headers;
}

function isRouted(c: Context): boolean {
  return (c.env as Record<string, unknown> | undefined)?.[ROUTED] === true;
}

/** Runs a forwarded request on this node's own app, as if its client had called here. */
export function runHere(
  app: { request(path: string, init: RequestInit, env: object): Response | Promise<Response> },
  request: RoutedRequest,
): Promise<RoutedResponse> {
  return Promise.resolve(
    app.request(
      request.path,
      {
        method: request.method,
        // The loopback Host a no-auth daemon requires; the caller's token is checked as usual.
        headers: { ...request.headers, host: "127.0.0.1" },
        ...(request.body !== undefined ? { body: request.body } : {}),
      },
      { [ROUTED]: true },
    ),
  ).then(async (res) => ({
    status: res.status,
    body: await res.text(),
    ...(res.headers.get("content-type") ? { contentType: res.headers.get("content-type")! } : {}),
  }));
}
