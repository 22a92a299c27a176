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
// A container's own server (`{ socketPath }`): the same API on a Unix socket in a private directory, which the
// `docker` harness relays into one container's network namespace at `http://127.0.0.1:PORT/<token>`; it holds
// that one session's desk, so it serves that session only.
//
//   POST /api/hitl/requests             create → the request envelope (asks Brain's clients)
//   GET  /api/hitl/requests/:id/wait    block until answered → the response envelope
//   GET  /api/hitl/requests/:id         the request envelope
//   GET  /api/hitl/requests?pending=true[&sessionId=&runId=]   pending requests
//   POST /api/hitl/requests/:id/respond refused: answers come from Brain's clients (Session.answer)
import { randomBytes, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { describeIssues } from "../../protocol/frames.js";
import { HitlCreateBody } from "../../protocol/nui/hitl.js";
import { type HitlDesk, HitlRefusal } from "./hitl-desk.js";

const MAX_BODY = 1 << 20;

export interface NuiApiListen {
  /** Listen on this Unix socket instead of a loopback port (retain() then resolves with the socket's path). */
  socketPath?: string;
}

export class NuiApiServer {
  private readonly desks = new Map<string, HitlDesk>();
  private server: Server | undefined;
  private listening: Promise<string> | undefined;

  private holders = 0;

  /**
   * The secret first path segment: served only under `/<token>/api/hitl/...`, anything else is answered 404
   * without a word of why. A secret: never logged, never in an error.
   */
  readonly token = randomBytes(24).toString("base64url");

  constructor(private readonly listen: NuiApiListen = {}) {}

  /**
   * Keeps the server listening until `release()`; resolves with the base URL to pass as NUI_API_URL (its path is
   * the token). Every session that runs a nui agent holds it, and so does a host shared by several sessions.
   */
  async retain(): Promise<{ url: string; release: () => Promise<void> }> {
    this.holders++;
    let released = false;
    const release = async () => {
      if (released) return;
      released = true;
      this.holders--;
      if (this.holders === 0) await this.stop();
    };
    try {
      return { url: await this.start(), release };
    } catch (err) {
      await release();
      throw err;
    }
  }

  /** Routes a session's requests to its desk until the returned function is called. */
  addDesk(desk: HitlDesk): () => void {
    this.desks.set(desk.sessionId, desk);
    return () => {
      if (this.desks.get(desk.sessionId) === desk) this.desks.delete(desk.sessionId);
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
          resolve(`http://127.0.0.1:${port}/${this.token}`);
        });
    });
    return this.listening;
  }

  private async route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const foreign = foreignCaller(req);
    if (foreign) return send(res, 403, { error: foreign });
    const url = new URL(req.url ?? "/", "http://localhost");
    const parts = url.pathname.split("/").filter(Boolean);
    if (!sameToken(parts.shift(), this.token)) return send(res, 404, { error: "not found" });
    if (parts[0] !== "api" || parts[1] !== "hitl" || parts[2] !== "requests") {
      return send(res, 404, {
        error: `Brain serves only nui's HITL API under /api/hitl/requests, not /${parts.join("/")}`,
      });
    }
    const id = parts[3] ? decodeURIComponent(parts[3]) : undefined;
    const action = parts[4];
    if (req.method === "POST" && !id) return this.create(req, res);
    if (req.method === "GET" && !id) return this.list(url, res);
    if (!id) return send(res, 405, { error: `${req.method} is not served on /api/hitl/requests` });
    const desk = [...this.desks.values()].find((d) => d.has(id));
    if (!desk) return send(res, 404, { error: `no HITL request "${id}" in any session Brain runs here` });
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

  private async create(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let raw: unknown;
    try {
      raw = JSON.parse((await readBody(req)) || "{}");
    } catch (err) {
      return send(res, 400, { error: `the body is not JSON: ${(err as Error).message}` });
    }
    const body = HitlCreateBody.safeParse(raw);
    if (!body.success) return send(res, 400, { error: `bad HITL request: ${describeIssues(body.error)}` });
    const desk = this.deskFor(body.data.sessionId, body.data.runId);
    if (typeof desk === "string") return send(res, 404, { error: desk });
    try {
      return send(res, 200, desk.create(body.data));
    } catch (err) {
      if (err instanceof HitlRefusal) return send(res, err.status, { error: err.message });
      throw err;
    }
  }

  private list(url: URL, res: ServerResponse): void {
    const sessionId = url.searchParams.get("sessionId") ?? undefined;
    const runId = url.searchParams.get("runId") ?? undefined;
    const desks = sessionId
      ? [this.desks.get(sessionId)].filter((d) => d !== undefined)
      : [...this.desks.values()];
    send(
      res,
      200,
      desks.flatMap((d) => d.pending(runId)),
    );
  }

  /** By session id; else by the run id (a host shared by sessions has no NUI_SESSION_ID); else the only one. */
  private deskFor(sessionId: string | undefined, runId: string | undefined): HitlDesk | string {
    const bySession = sessionId ? this.desks.get(sessionId) : undefined;
    if (bySession) return bySession;
    const byRun = runId ? [...this.desks.values()].find((d) => d.runs(runId)) : undefined;
    if (byRun) return byRun;
    if (!sessionId && this.desks.size === 1) return [...this.desks.values()][0]!;
    if (sessionId) return `no session "${sessionId}" runs a nui agent here (NUI_SESSION_ID names it)`;
    return "the request names neither a sessionId nor a running runId: set sessionId (NUI_SESSION_ID) or runId (NUI_RUN_ID)";
  }
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

function sameToken(given: string | undefined, token: string): boolean {
  const a = Buffer.from(given ?? "");
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

function send(res: ServerResponse, status: number, body: unknown): void {
  if (res.headersSent) return;
  const text = JSON.stringify(body ?? {});
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY) throw new Error("request body over 1 MiB");
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString("utf8");
}
