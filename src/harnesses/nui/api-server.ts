// The part of nui's REST API its extensions call, served on loopback for the sessions Brain runs: the HITL
// endpoints nui's Python SDK (nui_hitl.py) uses, so an unchanged extension's ask_user() and
// request_approval() become Brain questions and permission requests. Brain passes this server's address as
// NUI_API_URL. It listens only while some session is registered, and routes by the session id in the body (or
// the one session, when there is just one).
//
// Loopback is not a boundary against a web browser on this machine: a page can POST text/plain to 127.0.0.1
// without a preflight, and a DNS-rebound name reaches it as its own origin. So every server serves only under a
// secret first path segment (`http://127.0.0.1:PORT/<token>`: nui's SDKs append /api/hitl/... to NUI_API_URL,
// so unchanged extensions carry it along), and refuses any request with an Origin header (hosts send none) or a
// Host that is not a loopback name.
//
// The sessions on one server may belong to different tenants and to different extensions, and their hosts choose
// their own request ids. So each holder gets a token of its own: a host started for one session reaches that
// session's requests only (its ids cannot collide with another session's, nor read them); a host shared by the
// sessions of one harness reaches theirs and no other harness's, and a request id already used by another of them
// is refused.
//
// A container's own server (`{ socketPath }`): the same API on a Unix socket in a private directory, which the
// `docker` harness relays into one container's network namespace at `http://127.0.0.1:PORT/<token>`; it holds
// that one session's desk, so it serves that session only.
//
//   POST /api/hitl/requests             create → the request envelope (asks Brain's clients)
//   GET  /api/hitl/requests/:id/wait    block until answered → the response envelope
//   GET  /api/hitl/requests/:id         the request envelope
//   GET  /api/hitl/requests?pending=true[&sessionId=&runId=]   pending requests
//   POST /api/hitl/requests/:id/respond refused: answers come from Brain's clients (Session.answer)
import { createHash, randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { describeIssues } from "../../protocol/frames.js";
import { notWritable } from "../../protocol/nui/harness-event.js";
import { HitlCreateBody } from "../../protocol/nui/hitl.js";
import { type HitlDesk, HitlRefusal } from "./hitl-desk.js";

const MAX_BODY = 1 << 20;

export interface NuiApiListen {
  /** Listen on this Unix socket instead of a loopback port (retain() then resolves with the socket's path). */
  socketPath?: string;
}

/**
 * Whose requests a holder's token reaches: one session's, the sessions of one harness (a host they share), or,
 * with neither, every session's on this server (a server that holds one session's desk, as a container's).
 */
export interface NuiApiScope {
  sessionId?: string;
  /** The harness (`ext:<extension>/<id>`) whose sessions a shared host serves: the name its desks were added with. */
  harness?: string;
}

interface RegisteredDesk {
  desk: HitlDesk;
  harness?: string;
}

export interface NuiApiLease {
  /** NUI_API_URL: the base URL, whose path is the holder's token (for a socket: the socket's path). */
  url: string;
  /** The secret first path segment of this holder's requests. Never logged, never in an error. */
  token: string;
  release: () => Promise<void>;
}

export class NuiApiServer {
  private readonly desks = new Map<string, RegisteredDesk>();
  /** Holders by the sha256 of their token, so finding one does not compare the secret byte by byte. */
  private readonly holders = new Map<string, NuiApiScope>();
  private server: Server | undefined;
  private listening: Promise<string> | undefined;

  constructor(private readonly listen: NuiApiListen = {}) {}

  /**
   * Keeps the server listening until `release()`; resolves with the base URL to pass as NUI_API_URL, under a
   * token of this holder's that reaches the requests of `scope` only. Every session that runs a nui agent holds
   * it, and so does a host shared by several sessions (unscoped).
   */
  async retain(scope: NuiApiScope = {}): Promise<NuiApiLease> {
    const token = randomBytes(24).toString("base64url");
    const key = digest(token);
    this.holders.set(key, scope);
    let released = false;
    const release = async () => {
      if (released) return;
      released = true;
      this.holders.delete(key);
      if (this.holders.size === 0) await this.stop();
    };
    try {
      const base = await this.start();
      return { url: this.listen.socketPath ? base : `${base}/${token}`, token, release };
    } catch (err) {
      await release();
      throw err;
    }
  }

  /**
   * Routes a session's requests to its desk until the returned function is called. `harness`: the session's
   * harness, whose shared host (a holder scoped to it) reaches this desk too.
   */
  addDesk(desk: HitlDesk, harness?: string): () => void {
    this.desks.set(desk.sessionId, { desk, ...(harness !== undefined ? { harness } : {}) });
    return () => {
      if (this.desks.get(desk.sessionId)?.desk === desk) this.desks.delete(desk.sessionId);
    };
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    this.listening = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private start(): Promise<string> {
    this.listening ??= new Promise((resolve, reject) => {
      const server = createServer((req, res) => {
        this.route(req, res).catch((err: Error) => send(res, 500, { error: err.message }));
      });
      this.server = server;
      server.once("error", reject);
      const { socketPath } = this.listen;
      if (socketPath) server.listen(socketPath, () => resolve(socketPath));
      else
        server.listen(0, "127.0.0.1", () => {
          const { port } = server.address() as AddressInfo;
          resolve(`http://127.0.0.1:${port}`);
        });
    });
    return this.listening;
  }

  private async route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const foreign = foreignCaller(req);
    if (foreign) return send(res, 403, { error: foreign });
    const url = new URL(req.url ?? "/", "http://localhost");
    const parts = url.pathname.split("/").filter(Boolean);
    const scope = this.holders.get(digest(parts.shift() ?? ""));
    if (!scope) return send(res, 404, { error: "not found" });
    const desks = this.desksOf(scope);
    if (parts[0] !== "api" || parts[1] !== "hitl" || parts[2] !== "requests") {
      return send(res, 404, {
        error: `Brain serves only nui's HITL API under /api/hitl/requests, not /${parts.join("/")}`,
      });
    }
    const id = parts[3] ? requestIdOf(parts[3]) : undefined;
    if (id === null) {
      return send(res, 400, {
        error:
          "the request id in the path has a malformed %-escape: percent-encode it as UTF-8 (encodeURIComponent)",
      });
    }
    const action = parts[4];
    if (req.method === "POST" && !id) return this.create(req, res, desks, scope.harness);
    if (req.method === "GET" && !id) return this.list(url, res, desks);
    if (!id) return send(res, 405, { error: `${req.method} is not served on /api/hitl/requests` });
    // Unambiguous: create refuses an id another desk of the same holder has.
    const desk = desks.find((d) => d.has(id));
    if (!desk)
      return send(res, 404, { error: `no HITL request "${id}" in the sessions this NUI_API_URL serves` });
    if (req.method === "GET" && action === "wait") return send(res, 200, await desk.wait(id));
    if (req.method === "GET" && !action) return send(res, 200, desk.get(id));
    if (req.method === "POST" && action === "respond") {
      return send(res, 409, {
        error: `HITL request "${id}" is a Brain ${desk.get(id)?.kind === "approval" ? "permission request" : "question"} of session ${desk.sessionId}: answer it through Brain (brain CLI or daemon), which passes the answer on`,
      });
    }
    return send(res, 404, {
      error: `${req.method} /api/hitl/requests/${id}${action ? `/${action}` : ""} is not served`,
    });
  }

  /** The registered desks a holder reaches. */
  private desksOf(scope: NuiApiScope): HitlDesk[] {
    if (scope.sessionId !== undefined) {
      const registered = this.desks.get(scope.sessionId);
      return registered ? [registered.desk] : [];
    }
    const all = [...this.desks.values()];
    const reached = scope.harness === undefined ? all : all.filter((r) => r.harness === scope.harness);
    return reached.map((r) => r.desk);
  }

  /** `shared`: the harness whose sessions the holder's host serves, when it is such a host. */
  private async create(
    req: IncomingMessage,
    res: ServerResponse,
    desks: HitlDesk[],
    shared: string | undefined,
  ): Promise<void> {
    let raw: unknown;
    try {
      const text = await readBody(req);
      if (text === undefined) {
        return send(res, 413, {
          error: `the body is over ${MAX_BODY >> 20} MiB, the most a HITL request takes: send a smaller payload`,
        });
      }
      raw = JSON.parse(text || "{}");
    } catch (err) {
      return send(res, 400, { error: `the body is not JSON: ${(err as Error).message}` });
    }
    // The request is logged (and sent back) as JSON: a body nested deeper than that can be written would be asked
    // and then fail the session's turn at the log.
    const unwritable = notWritable(raw);
    if (unwritable !== undefined)
      return send(res, 400, {
        error: `bad HITL request: it nests too deep to be written as JSON (${unwritable}); send a flatter payload`,
      });
    const body = HitlCreateBody.safeParse(raw);
    if (!body.success) return send(res, 400, { error: `bad HITL request: ${describeIssues(body.error)}` });
    const desk = deskFor(desks, body.data.sessionId, body.data.runId, shared);
    if (typeof desk === "string") return send(res, 404, { error: desk });
    const { requestId } = body.data;
    if (requestId !== undefined && desks.some((d) => d !== desk && d.has(requestId))) {
      return send(res, 409, {
        error: `HITL request id "${requestId}" is taken by another session's request on this NUI_API_URL: give each request an id of its own (nui's SDK makes a uuid when none is given)`,
      });
    }
    try {
      return send(res, 200, desk.create(body.data));
    } catch (err) {
      if (err instanceof HitlRefusal) return send(res, err.status, { error: err.message });
      throw err;
    }
  }

  private list(url: URL, res: ServerResponse, desks: HitlDesk[]): void {
    const sessionId = url.searchParams.get("sessionId") ?? undefined;
    const runId = url.searchParams.get("runId") ?? undefined;
    const listed = sessionId ? desks.filter((d) => d.sessionId === sessionId) : desks;
    send(
      res,
      200,
      listed.flatMap((d) => d.pending(runId)),
    );
  }
}

/**
 * Among a holder's desks: by session id; else by the run id (a host shared by sessions has no NUI_SESSION_ID);
 * else the only one, unless the holder is a host `shared` by a harness's sessions: the one of them open now may be
 * another tenant's than the session the request was made for (by a thread left from a run of a closed session).
 */
function deskFor(
  desks: HitlDesk[],
  sessionId: string | undefined,
  runId: string | undefined,
  shared: string | undefined,
): HitlDesk | string {
  const bySession = sessionId ? desks.find((d) => d.sessionId === sessionId) : undefined;
  if (bySession) return bySession;
  const byRun = runId ? desks.find((d) => d.runs(runId)) : undefined;
  if (byRun) return byRun;
  if (!sessionId && shared !== undefined) {
    const named = runId
      ? `names run "${runId}", which is not running,`
      : "names neither a sessionId nor a runId";
    return `the request ${named} and this host is shared by the sessions of ${shared}: name the running run it is for (the runId of its harness.run) so that it is asked in that run's session`;
  }
  if (!sessionId && desks.length === 1) return desks[0]!;
  if (sessionId) return `no session "${sessionId}" runs a nui agent here (NUI_SESSION_ID names it)`;
  return "the request names neither a sessionId nor a running runId: set sessionId (NUI_SESSION_ID) or runId (NUI_RUN_ID)";
}

/** Why a request cannot be an extension host's (a web page's, or one sent to a rebound name), if so. */
function foreignCaller(req: IncomingMessage): string | undefined {
  if (req.headers.origin !== undefined) {
    return "requests from a web page (with an Origin header) are refused: this API is for the extension hosts Brain starts, which send none";
  }
  const host = req.headers.host;
  if (host !== undefined && !isLoopbackHost(host)) {
    return "Host must name this machine's loopback (127.0.0.1, localhost or [::1]): use NUI_API_URL as Brain gave it";
  }
  return undefined;
}

function isLoopbackHost(host: string): boolean {
  const name = host.replace(/:\d+$/, "").toLowerCase();
  return name === "localhost" || name === "[::1]" || /^127(\.\d{1,3}){3}$/.test(name);
}

/** A path segment's request id, or null when its %-escapes are not UTF-8. */
function requestIdOf(segment: string): string | null {
  try {
    return decodeURIComponent(segment);
  } catch {
    return null;
  }
}

function digest(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}

function send(res: ServerResponse, status: number, body: unknown): void {
  if (res.headersSent) return;
  const text = JSON.stringify(body ?? {});
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

/** The body as text, or undefined once it passes MAX_BODY (what came is dropped, the rest not read). */
async function readBody(req: IncomingMessage): Promise<string | undefined> {
  if (Number(req.headers["content-length"] ?? 0) > MAX_BODY) return undefined;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY) return undefined;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString("utf8");
}
