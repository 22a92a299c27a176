// `brain serve`: the daemon on @hono/node-server. Wires the session service, the watchers' feeds, the control
// leases and nui's HITL API into one app, and listens (127.0.0.1:7777 by default).
import { realpathSync } from "node:fs";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { resolve } from "node:path";
import { serve } from "@hono/node-server";
import type { Brain } from "../core/brain.js";
import { installVersion } from "../core/install-root.js";
import { type RetentionPolicy, RetentionSweeper, retiresSegments } from "../core/retention.js";
import type { SessionDefaults } from "../protocol/config.js";
import { type AgentCatalog, NO_AGENTS } from "./agents.js";
import { type App, buildApp } from "./app.js";
import { callerOf } from "./auth/caller.js";
import { DEFAULT_TENANT, type Principal, TokenTable } from "./auth/tokens.js";
import { ControlLeases } from "./control.js";
import { DEFAULT_HOST, DEFAULT_PORT } from "./defaults.js";
import { withoutHome } from "./errors.js";
import { isTenantList } from "./hitl/cluster-list.js";
import { HitlService, hitlWaits } from "./hitl/service.js";
import { answerHttpErrors } from "./http-errors.js";
import { LogReads } from "./log-reads.js";
import { isLoopback } from "./loopback.js";
import { eventRoute } from "./routes/events.js";
import { hitlRoutes } from "./routes/hitl.js";
import { sessionRoutes } from "./routes/sessions.js";
import { type CommandRouter, forwardToOwner, runHere } from "./routing.js";
import { SessionService } from "./sessions.js";
import { TickFlusher } from "./sse/flusher.js";
import { FeedHub } from "./sse/hub.js";
import { DEFAULT_SSE_LIMITS, type SseLimits } from "./sse/stream.js";
import { Watchers } from "./sse/watchers.js";
import { bodyReads, forwardWaits } from "./tenant-bound.js";

export { DEFAULT_HOST, DEFAULT_PORT } from "./defaults.js";

export interface DaemonOptions {
  brain: Brain;
  /** $BRAIN_HOME: error bodies name it "$BRAIN_HOME", never by its path on this machine. */
  home?: string;
  host?: string;
  /** 0 picks a free port. */
  port?: number;
  /** The tokens; undefined serves without auth (loopback only). */
  tokens?: { token: string; tenant: string; role: Principal["role"]; name?: string; providers?: string[] }[];
  defaults?: SessionDefaults;
  agents?: AgentCatalog;
  sse?: Partial<SseLimits>;
  heartbeatMs?: number;
  /** How many event streams one tenant may hold open at once (brain.config.json `limits`); absent: no bound. */
  eventStreamsPerTenant?: number;
  /** How many log pages one tenant may have on their way at once (default LOG_READS_PER_TENANT). */
  logReadsPerTenant?: number;
  /** How many request bodies one tenant may be sending at once (default BODIES_PER_TENANT). */
  bodiesPerTenant?: number;
  /** How many HITL waits one tenant may hold at once (default HITL_WAITS_PER_TENANT). */
  hitlWaitsPerTenant?: number;
  /** How many commands one tenant may have waiting on other nodes at once (default FORWARDS_PER_TENANT). */
  forwardsPerTenant?: number;
  /** What to do with closed sessions' logs over time (brain.config.json `retention`); absent keeps them whole. */
  retention?: RetentionPolicy;
  /** A 5xx's error, for the operator's log; a session's secrets are redacted in all of it (redactError). */
  onError?: (err: unknown) => void;
  /** A line for the operator that is no failure (retention passing over what it cannot judge). */
  onWarning?: (message: string) => void;
  /** Cluster mode: commands for sessions another node owns go there; this node serves those it owns. */
  router?: CommandRouter;
  /** How long a retry waits for the first request under its Idempotency-Key (default KEYED_WAIT_MS). */
  keyedWaitMs?: number;
}

export interface Daemon {
  url: string;
  host: string;
  port: number;
  app: App;
  sessions: SessionService;
  /** The open event streams and how many have ended, by reason. */
  watchers: Watchers;
  /** Stops listening and ends every stream; the Brain is the caller's to close. */
  close(): Promise<void>;
}

/** What a node answers a gather that is not nui's tenant-wide HITL list (the one read every node answers). */
const notGathered = {
  status: 400,
  contentType: "application/json",
  body: JSON.stringify({
    error: { code: "bad_request", message: "only GET /api/hitl/requests is gathered" },
  }),
};

/**
 * The session of `tenant` open here in which a permission request or question with this id is pending. Clients
 * choose nui's request ids, so two tenants may use the same one: only the caller's own sessions count (an old
 * node that sends no tenant finds any).
 */
function pendingIn(brain: Brain, requestId: string, tenant: string | undefined): string | undefined {
  return brain
    .liveSessions()
    .find(
      (live) =>
        (tenant === undefined || (live.tenant ?? DEFAULT_TENANT) === tenant) &&
        live.session.pendingRequests().some((r) => r.id === requestId),
    )?.session.id;
}

/**
 * Serves other nodes' commands for every session while it is open here, and the HITL answers (by request id)
 * for the requests pending here. Returns the stop function.
 */
function serveOwned(brain: Brain, router: CommandRouter, app: App): () => void {
  const stopHitl = router.serveLocate((requestId, tenant) => pendingIn(brain, requestId, tenant));
  const stopNode = router.serveNode?.((request) => runHere(app, request)) ?? (() => {});
  // Only nui's tenant-wide HITL list is gathered: anything else sent there is not run on every node.
  const stopGather =
    router.serveGather?.((request) =>
      isTenantList(request) ? runHere(app, request) : Promise.resolve(notGathered),
    ) ?? (() => {});
  const serving = new Map<string, () => void>();
  const serve = (id: string) => {
    serving.get(id)?.();
    serving.set(
      id,
      router.serve(id, (request) => runHere(app, request)),
    );
  };
  for (const live of brain.liveSessions()) serve(live.session.id);
  const unsubscribe = brain.subscribe((change) => {
    const id = change.type === "opened" ? change.session.id : change.id;
    if (change.type === "opened") return serve(id);
    serving.get(id)?.();
    serving.delete(id);
  });
  return () => {
    unsubscribe();
    stopHitl();
    stopNode();
    stopGather();
    for (const stop of serving.values()) stop();
    serving.clear();
  };
}

/** The home as given and as resolved (symlinks, e.g. macOS /tmp), longest first, so the shorter
 * one never replaces only part of the longer. */
function homesOf(home: string): string[] {
  const given = resolve(home);
  let real = given;
  try {
    real = realpathSync(given);
  } catch {}
  return [...new Set([given, real])].sort((a, b) => b.length - a.length);
}

export async function startDaemon(options: DaemonOptions): Promise<Daemon> {
  const host = options.host ?? DEFAULT_HOST;
  if (!options.tokens && !isLoopback(host)) {
    throw new Error(
      `--no-auth is only allowed on a loopback address, not ${host}: drop --no-auth or bind 127.0.0.1`,
    );
  }
  const brain = options.brain;
  // The feeds follow the core's registry: a session's live log while it is open, its stored events after.
  const hub = new FeedHub(
    (id, after, limit) => brain.events(id, after, limit),
    (id, listener, gone, damaged) => brain.followStored(id, listener, gone, damaged),
    (id) => brain.firstSeq(id),
  );
  for (const live of brain.liveSessions()) hub.attach(live.session.id, live.session.log);
  const unsubscribe = brain.subscribe((change) => {
    if (change.type === "opened") hub.attach(change.session.id, change.session.log);
    else if (change.type === "closed") hub.detach(change.id, change.log);
    else hub.end(change.id);
  });
  const leases = new ControlLeases();
  const flusher = new TickFlusher();
  const watchers = new Watchers(options.heartbeatMs, options.eventStreamsPerTenant);
  const agents = options.agents ?? NO_AGENTS;
  const sessions = new SessionService({
    brain,
    leases,
    defaults: options.defaults ?? {},
    agents,
    keyedWaitMs: options.keyedWaitMs,
  });
  // One bound for a tenant's HITL waits, whether this node or another has the request pending.
  const waits = hitlWaits(options.hitlWaitsPerTenant);
  const hitl = new HitlService(sessions, hub, waits);
  const limits = { ...DEFAULT_SSE_LIMITS, ...options.sse };
  const homes = options.home ? homesOf(options.home) : [];
  // What a client is shown of a message: no path under $BRAIN_HOME, no secret.
  const forClient = (text: string) => brain.redactor.redact(withoutHome(text, homes));
  const routes = [
    ...sessionRoutes({
      sessions,
      agents,
      auth: options.tokens !== undefined,
      logReads: new LogReads(options.logReadsPerTenant),
      shown: forClient,
    }),
    eventRoute({ sessions, hub, leases, flusher, watchers, limits, shown: forClient }),
    ...hitlRoutes(hitl),
  ];
  const tokens = options.tokens ? new TokenTable(options.tokens) : undefined;
  const bodies = bodyReads(options.bodiesPerTenant);
  const app = buildApp({
    routes,
    tokens,
    bodies,
    version: installVersion(),
    homes,
    redact: (text) => options.brain.redactor.redact(text),
    redactForSession: (caller, id, text) => {
      const live = brain.liveSession(id);
      return live && (live.tenant ?? DEFAULT_TENANT) === caller.tenant
        ? live.session.redactor.redact(text)
        : text;
    },
    ...(options.onError ? { onError: options.onError } : {}),
    ...(options.router
      ? {
          before: forwardToOwner({
            brain,
            router: options.router,
            // `app` is built by now: the middleware only runs on requests.
            runHere: (request) => runHere(app, request),
            pendingHere: (id, tenant) => pendingIn(brain, id, tenant) !== undefined,
            tenantOf: (c) => callerOf(c.req.raw, new URL(c.req.url), tokens, c.req.param("token")).tenant,
            bodies,
            forwards: forwardWaits(options.forwardsPerTenant),
            waits,
          }),
        }
      : {}),
  });
  const stopServing = options.router ? serveOwned(brain, options.router, app) : () => {};
  const server = await new Promise<Server>((resolve, reject) => {
    const s = serve({ fetch: app.fetch, port: options.port ?? DEFAULT_PORT, hostname: host }) as Server;
    answerHttpErrors(s);
    s.once("error", reject);
    s.once("listening", () => resolve(s));
  });
  const port = (server.address() as AddressInfo).port;
  const shown = host.includes(":") ? `[${host}]` : host;
  const onError = options.onError ?? (() => {});
  const retention = options.retention
    ? new RetentionSweeper(
        async (policy) => {
          if (policy.compactAfterMs !== undefined) await brain.compactIdle(policy.compactAfterMs);
          if (retiresSegments(policy)) await brain.retireIdle(policy, options.onWarning);
        },
        options.retention,
        onError,
      )
    : undefined;
  retention?.start();
  let closing: Promise<void> | undefined;
  return {
    url: `http://${shown}:${port}`,
    host,
    port,
    app,
    sessions,
    watchers,
    close() {
      closing ??= (async () => {
        unsubscribe();
        await retention?.stop();
        stopServing();
        watchers.closeAll();
        hub.endAll();
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        });
      })();
      return closing;
    },
  };
}
