// A reference HTTP/SSE agent server (nui's `remote` and `docker` protocol, docs/protocol.md) for any NuiAgent:
//
//   GET  /info      → {name, version, capabilities}
//   POST /run       {message, runId?, sessionId?, workingDir?, systemPrompt?, model?} → text/event-stream,
//                   one `data: {event}` per harness event, ending with `done` (or `error`)
//   POST /cancel    {runId} → {ok: true}; the run's SSE stream ends with {"type":"error","error":"cancelled"}
//   POST /shutdown  → {ok: true}; the server stops (nui and Brain call it before `docker stop`)
//
// A client that goes away cancels its run. Start from it: `await serveHttp(new MyAgent(), { port: 9090 })`.
// Without a `token` the server has no authentication, so it listens on 127.0.0.1 unless told otherwise; an agent
// inside a container passes `host: "0.0.0.0"` so that a published port reaches it, and should take a token: a
// published port answers every process on the host, and every container on its network.
// With `connectionFile` (default: when NUI_CONNECTION_ID is set, i.e. an extension host with transport http)
// the server also writes its connection file, with its token (a fresh one when none is given), which it requires.

import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { MAX_FRAME } from "../../../src/protocol/ndjson.js";
import type { NuiAgent } from "./agent.js";
import { connectionFile, connectionToken, sameToken, writeConnectionFile } from "./connection-file.js";
import { SSE_EVENT_LIMIT } from "./fit.js";
import { catchRunLeaks, guarded } from "./run.js";

export interface HttpServeOptions {
  /** 0 picks a free port. Default 9090 (nui's docker examples). */
  port?: number;
  /**
   * Default 127.0.0.1: anyone who reaches the port can run the agent, so only this machine may. Inside a
   * container whose port is published, pass "0.0.0.0" (the container's network is then the boundary).
   */
  host?: string;
  connectionFile?: boolean;
  /**
   * More `POST <path>` endpoints beside nui's: JSON body in, the handler's value out as JSON (an error it throws
   * answers 400 with its message). Brain's CLI agent server adds /checkpoint and /verify this way.
   */
  routes?: Record<string, (body: Record<string, unknown>) => Promise<unknown>>;
  /**
   * When set, every request (GET /info too) must carry `Authorization: Bearer <token>`; any other is answered
   * 401. Brain's `docker` harness gives its container one (BRAIN_AGENT_TOKEN) and sends it with each request.
   */
  token?: string;
}

export interface HttpServing {
  port: number;
  url: string;
  /** Resolves once the server stopped (POST /shutdown or close()). */
  closed: Promise<void>;
  close(): Promise<void>;
}

/**
 * A /run body carries the prompt and the system prompt, each as long as Brain lets a session have one (a runner
 * frame), besides the env and ids: the `docker` harness sends them all in one request, so less refused prompts
 * every other harness takes.
 */
const MAX_BODY = 2 * MAX_FRAME + (1 << 20);

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  // Decoded once whole: a character whose bytes two chunks share would be two U+FFFD decoded chunk by chunk.
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY)
      throw new Error(
        `the body is over ${MAX_BODY >> 20} MiB, more than this agent reads: send a shorter message or systemPrompt`,
      );
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString("utf8");
  if (!text.trim()) return {};
  const value = JSON.parse(text) as unknown;
  if (!value || typeof value !== "object" || Array.isArray(value))
    throw new Error("the body must be a JSON object");
  return value as Record<string, unknown>;
}

function authorized(req: IncomingMessage, token: string): boolean {
  const header = req.headers.authorization ?? "";
  const sent = header.startsWith("Bearer ") ? header.slice("Bearer ".length) : "";
  return sameToken(sent, token);
}

function json(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

export function serveHttp(agent: NuiAgent, options: HttpServeOptions = {}): Promise<HttpServing> {
  catchRunLeaks(agent.name);
  const runs = new Map<string, AbortController>();
  let removeFile = () => {};
  let stopped: () => void = () => {};
  const closed = new Promise<void>((resolve) => {
    stopped = resolve;
  });

  const run = async (req: IncomingMessage, res: ServerResponse) => {
    let body: Record<string, unknown>;
    try {
      body = await readJson(req);
    } catch (err) {
      return json(res, 400, { error: (err as Error).message });
    }
    if (typeof body.message !== "string")
      return json(res, 400, { error: 'POST /run needs {"message": "..."}' });
    const runId = typeof body.runId === "string" && body.runId ? body.runId : randomUUID();
    const controller = new AbortController();
    runs.set(runId, controller);
    res.on("close", () => controller.abort()); // the client went away
    res.writeHead(200, {
      "content-type": "text/event-stream",
      "cache-control": "no-cache",
      connection: "keep-alive",
    });
    const sse = (event: unknown) => {
      if (!res.writableEnded) res.write(`data: ${JSON.stringify(event)}\n\n`);
    };
    let cancelled = false;
    try {
      const result = await agent.execute(
        { ...body, runId },
        {
          emit: (event) => {
            // nui's HTTP agents send `done` last and carry no runId in events: the stream is the run.
            const { runId: _own, ...rest } = event as { type: string; runId?: unknown };
            if (rest.type === "done") return;
            sse(rest);
          },
          signal: controller.signal,
          eventLimit: SSE_EVENT_LIMIT,
        },
      );
      cancelled = result.cancelled;
    } finally {
      runs.delete(runId);
    }
    if (cancelled) sse({ type: "error", error: "cancelled" });
    else {
      const sessionId = await guarded(agent, "getSessionId", () => agent.getSessionId(runId));
      sse({ type: "done", ...(sessionId ? { sessionId } : {}) });
    }
    res.end();
  };

  const writeFile = options.connectionFile ?? Boolean(process.env.NUI_CONNECTION_ID);
  // A host found through its connection file serves only who read the file: its port answers every local process
  // (and a web page's text/plain POST), so without a token of its own it takes one and writes it there.
  const token = options.token ?? (writeFile ? connectionToken() : undefined);
  const server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    if (token !== undefined && !authorized(req, token)) {
      res.setHeader("www-authenticate", "Bearer");
      return json(res, 401, { error: "this agent needs Authorization: Bearer <its token>" });
    }
    if (req.method === "GET" && path === "/info") {
      return json(res, 200, { name: agent.name, version: agent.version, capabilities: agent.capabilities });
    }
    if (req.method === "POST" && path === "/run") return void run(req, res);
    if (req.method === "POST" && path === "/cancel") {
      return void readJson(req)
        .then(async (body) => {
          const runId = String(body.runId ?? "");
          runs.get(runId)?.abort();
          await guarded(agent, "onCancel", () => agent.onCancel(runId));
          json(res, 200, { ok: true });
        })
        .catch((err: Error) => json(res, 400, { error: err.message }));
    }
    if (req.method === "POST" && path === "/shutdown") {
      return void guarded(agent, "onShutdown", () => agent.onShutdown()).then(() => {
        json(res, 200, { ok: true });
        void close();
      });
    }
    const routes = options.routes ?? {};
    const route = req.method === "POST" && path && Object.hasOwn(routes, path) ? routes[path] : undefined;
    if (route) {
      return void readJson(req)
        .then(route)
        .then(
          (value) => json(res, 200, value ?? {}),
          (err: Error) => json(res, 400, { error: err.message }),
        );
    }
    const more = Object.keys(routes).map((p) => `, ${p}`);
    json(res, 404, {
      error: `no ${req.method} ${path}: this agent serves GET /info, POST /run, /cancel, /shutdown${more.join("")}`,
    });
  });

  const close = async () => {
    removeFile();
    for (const controller of runs.values()) controller.abort();
    server.closeIdleConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    stopped();
  };

  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 9090, options.host ?? "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      if (writeFile) removeFile = writeConnectionFile(connectionFile(agent.name), port, "127.0.0.1", token);
      resolve({ port, url: `http://127.0.0.1:${port}`, closed, close });
    });
  });
}
