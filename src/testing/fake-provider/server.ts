// The fake provider's HTTP server: routes model requests to a wire format, logs them, and answers each with the
// next scripted step.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { anthropic } from "./anthropic.js";
import { gemini } from "./gemini.js";
import {
  clientGone,
  flatHeaders,
  NDJSON_FRAMING,
  readBody,
  SSE_FRAMING,
  sendJson,
  writeStream,
} from "./http.js";
import { ollama } from "./ollama.js";
import { openaiChat } from "./openai-chat.js";
import { openaiResponses } from "./openai-responses.js";
import { RequestLog } from "./request-log.js";
import { ScriptQueue, toReply } from "./scripts.js";
import type {
  FakeProvider,
  FakeProviderRequest,
  RenderContext,
  ScriptStep,
  StartOptions,
  WireFormatHandler,
} from "./types.js";

const HANDLERS = [openaiChat, anthropic, openaiResponses, gemini, ollama];

const MODELS = ["fake-model", "fake-model-mini"];

export async function startFakeProvider(opts: StartOptions = {}): Promise<FakeProvider> {
  const queue = new ScriptQueue();
  const log = new RequestLog();
  const sockets = new Set<Socket>();

  async function handleModel(
    handler: WireFormatHandler,
    req: IncomingMessage,
    res: ServerResponse,
  ): Promise<void> {
    const signal = clientGone(res);
    const raw = await readBody(req);
    const headers = flatHeaders(req);
    const [path = "", search = ""] = (req.url ?? "").split("?");
    const query = new URLSearchParams(search);
    const seq = log.nextSeq();
    const ids = { "x-request-id": `req_fake${seq}`, "request-id": `req_fake${seq}` };

    let body: unknown;
    let parsed = true;
    try {
      body = JSON.parse(raw);
    } catch {
      body = raw;
      parsed = false;
    }
    const entry: FakeProviderRequest = {
      seq,
      format: handler.format,
      path: req.url ?? "",
      headers,
      body,
      receivedAt: Date.now(),
    };
    log.record(entry);
    signal.addEventListener("abort", () => {
      entry.aborted = true;
    });

    // Rejected requests are logged but consume no step: the script describes what the model says.
    if (opts.apiKey !== undefined && !handler.authorized(headers, opts.apiKey, query)) {
      const error = handler.unauthorized();
      return sendJson(res, error.status, handler.errorBody(error), ids);
    }
    if (!parsed || body === null || typeof body !== "object") {
      const error = { status: 400, message: "The request body is not valid JSON." };
      return sendJson(res, 400, handler.errorBody(error), ids);
    }

    const json = body as Record<string, unknown>;
    const model = handler.modelFrom?.(path) ?? (typeof json.model === "string" ? json.model : MODELS[0]!);
    const rejected = handler.rejects?.(json, model);
    if (rejected) return sendJson(res, rejected.status, handler.errorBody(rejected), ids);

    const step: ScriptStep = queue.next(entry);
    if ("hang" in step) {
      // Nothing is written; the response ends when the client aborts or close() destroys the socket.
      return;
    }
    if ("error" in step) {
      const { retry, page, retryAfter, ...error } = step.error;
      const retryHeader: Record<string, string> = {
        ...(retry === undefined ? {} : { "x-should-retry": String(retry) }),
        ...(retryAfter === undefined ? {} : { "retry-after": String(retryAfter) }),
      };
      if (page !== undefined) {
        res.writeHead(error.status, { "content-type": "text/html", ...ids, ...retryHeader });
        res.end(page);
        return;
      }
      return sendJson(res, error.status, handler.errorBody(error), { ...ids, ...retryHeader });
    }
    const ctx: RenderContext = {
      seq,
      body: json,
      model,
      reply: toReply(step, raw.length),
      created: Math.floor(Date.now() / 1000),
    };
    const streams = handler.streams ? handler.streams(json, path) : json.stream === true;
    if (streams) {
      const framing = handler.framing === "ndjson" ? NDJSON_FRAMING : SSE_FRAMING;
      const { breakAfter, endAfter, stallAfter, streamError } = ctx.reply;
      await writeStream(res, handler.stream(ctx), signal, ids, framing, {
        ...(breakAfter === undefined ? {} : { breakAfter }),
        ...(endAfter === undefined ? {} : { endAfter }),
        ...(stallAfter === undefined ? {} : { stallAfter }),
        ...(streamError === undefined
          ? {}
          : { fail: { after: streamError.after, frame: handler.streamError(streamError) } }),
      });
    } else {
      sendJson(res, 200, handler.json(ctx), ids);
    }
  }

  function listModels(res: ServerResponse): void {
    // One list readable both as OpenAI's (`object`, `owned_by`) and Anthropic's (`type`, `display_name`) shape.
    const created = Math.floor(Date.now() / 1000);
    const data = MODELS.map((id) => ({
      id,
      object: "model",
      created,
      owned_by: "fake-provider",
      type: "model",
      display_name: id,
      created_at: new Date(created * 1000).toISOString(),
    }));
    sendJson(res, 200, {
      object: "list",
      data,
      has_more: false,
      first_id: MODELS[0],
      last_id: MODELS.at(-1),
    });
  }

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? "/").split("?")[0]!;
    const handler = HANDLERS.find((h) => h.paths.includes(path) || h.matches?.(path));
    if (handler && req.method === "POST") return handleModel(handler, req, res);
    if (req.method === "GET" && (path === "/v1/models" || path === "/models")) {
      const headers = flatHeaders(req);
      const key = opts.apiKey;
      if (key !== undefined && !openaiChat.authorized(headers, key) && !anthropic.authorized(headers, key)) {
        const error = openaiChat.unauthorized();
        return sendJson(res, 401, openaiChat.errorBody(error));
      }
      return listModels(res);
    }
    req.resume();
    sendJson(res, 404, openaiChat.errorBody({ status: 404, message: `Unknown path: ${req.method} ${path}` }));
  }

  const server = createServer((req, res) => {
    // A client that vanishes mid-request or mid-stream must never take the server down.
    req.on("error", () => {});
    res.on("error", () => {});
    route(req, res).catch((err: unknown) => {
      const message = err instanceof Error ? err.message : String(err);
      if (!res.headersSent) sendJson(res, 500, openaiChat.errorBody({ status: 500, message }));
      else res.destroy();
    });
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port ?? 0, opts.host ?? "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://${opts.host ?? "127.0.0.1"}:${port}`,
    requests: log.entries,
    script: (steps) => queue.push(steps),
    setFallback: (fn) => queue.setFallback(fn),
    reset() {
      log.clear();
      queue.clear();
    },
    waitForRequests: (count, timeoutMs = 10_000) => log.waitFor(count, timeoutMs),
    close() {
      return new Promise((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      });
    },
  };
}
