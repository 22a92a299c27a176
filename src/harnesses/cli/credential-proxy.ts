// The provider's real key never enters a CLI agent's environment: every shell command the agent runs inherits
// that environment, so one prompt injection ("print your env") would send the operator's key off the host.
// Instead the CLI is given this proxy's URL, whose path starts with a random token, and that token as its key:
// both are worthless anywhere but here, and dead once the harness closes. The proxy, on 127.0.0.1 in Brain's
// process, takes only requests under the token, puts the real key in the vendor's own header, forwards to the
// real endpoint and streams the answer back as it comes (SSE). One per harness, so the token's life is the
// session's, and nothing of one session's provider is reachable with another's token. A CLI in a session's
// container reaches it at the same URL: the port is bridged into the container's loopback (./services.ts).
import { randomBytes, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { Agent } from "undici";
import { Redactor } from "../../core/redact.js";
import { type AnswerRedactor, withMaskedEcho } from "./masked-echo.js";
import type { WireApi } from "./provider-api.js";
import { after, MAX_CONNECTIONS, ProxyConnections, type ProxyTimer } from "./proxy-connections.js";
import { refusedRoute } from "./proxy-paths.js";
import { decoderOf, redactedHeaders, redactingBody } from "./proxy-redact.js";

/**
 * What the proxy can put a key on: the CLI wires, and the Gemini API (gemini-cli, its own model API: no CLI
 * family but its ACP preset speaks it, so it is not one of provider-api.ts's WireApi).
 */
export type ProxyWire = WireApi | "gemini";

/** A request body larger than any one model request (Anthropic's own limit is 32 MB) is refused with 413. */
export const MAX_REQUEST_BYTES = 64 * 1024 * 1024;

/** How long a request's body may send nothing before it is cut with a 408: a CLI sends its body from memory. */
export const BODY_IDLE_MS = 30_000;

/** The proxy's timers, each the real one unless a test passes its own. */
export interface ProxyTimers {
  /** A request body's wait for its next chunk (BODY_IDLE_MS). */
  bodyIdle?: ProxyTimer;
  /** A connection's wait for a request's head (./proxy-connections.ts, HEADERS_WAIT_MS). */
  headers?: ProxyTimer;
}

/** Where each wire's vendor is when the provider names no base_url, as its SDKs join paths to it. */
const VENDOR_BASE: Record<ProxyWire, string> = {
  messages: "https://api.anthropic.com",
  chat: "https://api.openai.com/v1",
  responses: "https://api.openai.com/v1",
  gemini: "https://generativelanguage.googleapis.com",
};

/** Every header a client may carry a key in: the agent's token never goes on to the provider. */
const KEY_HEADERS = ["authorization", "x-api-key", "x-goog-api-key", "api-key", "proxy-authorization"];
/**
 * Headers by which a client picks whose account a key is used for, or sends a credential of its own: the operator
 * picks the account with the key, and the agent must not choose among the organisations, projects or billing
 * projects that key reaches (an OpenAI SDK sends OPENAI_ORG_ID/OPENAI_PROJECT_ID from its environment as
 * OpenAI-Organization/OpenAI-Project). None of the CLIs sends one (research/cli-transcripts).
 */
const ACCOUNT_HEADERS = [
  "openai-organization",
  "openai-project",
  "chatgpt-account-id",
  "x-goog-user-project",
  "cookie",
];
/** Hop-by-hop headers (RFC 9110 7.6.1), and those undici sets itself. */
const HOP_HEADERS = ["connection", "keep-alive", "transfer-encoding", "upgrade", "te", "trailer", "host"];
/**
 * Request headers that are not forwarded besides those. `Expect: 100-continue` (curl's, for a large body) was
 * answered here: node's server sent the 100 and the body came; undici refuses the header outright ("expect header
 * not supported"), and the agent's request would end in a 502.
 */
const ANSWERED_HERE = ["expect"];
/**
 * Response headers that are not passed on besides the hop-by-hop ones: the body is redacted (./proxy-redact.ts), so
 * its length is not the provider's, and one the provider compressed goes on decoded.
 */
const REWRITTEN = ["content-length", "content-encoding"];

/** The key in the header the vendor reads it from. */
function keyHeader(wire: ProxyWire, key: string): Record<string, string> {
  if (wire === "messages") return { "x-api-key": key };
  return wire === "gemini" ? { "x-goog-api-key": key } : { authorization: `Bearer ${key}` };
}

export interface ProxyTarget {
  wire: ProxyWire;
  api_key: string;
  /** The provider's base URL as the CLI's SDK would join paths to it (Anthropic's without /v1); none: the vendor's. */
  base_url?: string;
}

export class CredentialProxy {
  /** What the CLI is given as its key: the token, as worthless as the URL anywhere else. */
  readonly token = randomBytes(24).toString("base64url");
  private readonly pool = new Agent({ bodyTimeout: 0, headersTimeout: 0 });
  private readonly upstream: URL;
  /** The key, kept out of every answer the agent reads (./proxy-redact.ts). */
  private readonly redactor: AnswerRedactor;
  private revoked = false;
  /** Where it listens on 127.0.0.1 (bridged into a container at the same port). */
  port = 0;

  private constructor(
    private readonly target: ProxyTarget,
    private readonly server: Server,
    private readonly refused: (message: string) => void,
    private readonly idle: ProxyTimer,
  ) {
    this.upstream = new URL(target.base_url ?? VENDOR_BASE[target.wire]);
    // The Redactor replaces the key's JSON-escaped and encoded forms too (../../core/secret-forms.ts): a gateway
    // echoes it URL-encoded, base64'd (a Basic credential) or with its `/` escaped; and the provider's own masked
    // echo of it, which shows its ends (./masked-echo.ts).
    const keyForms = new Redactor([{ name: "api_key", value: target.api_key }]);
    this.redactor = withMaskedEcho(keyForms, "api_key", target.api_key);
  }

  /**
   * `refused`: told why, without the key or the request's query, each time a request is refused its path.
   * `timers`: a test's own, in place of the real waits.
   */
  static async start(
    target: ProxyTarget,
    refused: (message: string) => void = () => {},
    timers: ProxyTimers = {},
  ): Promise<CredentialProxy> {
    const server = createServer();
    const connections = new ProxyConnections(timers.headers);
    const proxy = new CredentialProxy(target, server, refused, timers.bodyIdle ?? after(BODY_IDLE_MS));
    server.on("connection", (socket: Socket) => connections.accepted(socket));
    const onRequest = (req: IncomingMessage, res: ServerResponse) => {
      const socket = req.socket;
      const underCap = connections.began(socket);
      res.once("close", () => connections.answered(socket));
      proxy
        .handle(req, res, underCap)
        .catch((err: Error) => fail(res, 502, `the provider could not be reached: ${err.message}`));
    };
    server.on("request", onRequest);
    // A client waiting for 100 Continue is told to go on by handle(), once it would take the body: one refused
    // (not under the token, or declaring too large a body) gets its 403 or 413 before sending a byte of it.
    server.on("checkContinue", onRequest);
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(0, "127.0.0.1", () => resolve());
    });
    proxy.port = (server.address() as AddressInfo).port;
    return proxy;
  }

  /** The base URL the CLI is given: this proxy, under the token. */
  get url(): string {
    return `http://127.0.0.1:${this.port}/${this.token}`;
  }

  /** The token dies first (a request on a kept-alive connection gets 403), then the server and its pool. */
  async close(): Promise<void> {
    this.revoked = true;
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeAllConnections();
    await closed;
    await this.pool.destroy();
  }

  private async handle(req: IncomingMessage, res: ServerResponse, underCap: boolean): Promise<void> {
    const rest = this.pathUnderToken(req.url ?? "");
    if (this.revoked || rest === undefined) return fail(res, 403, "not a live session's credential path");
    if (!underCap) {
      return fail(
        res,
        429,
        `the credential proxy holds this session's limit of ${MAX_CONNECTIONS} connections at once; retry once one of them has closed`,
      );
    }
    // Before the body is read: a refused request gets its 403 before a client waiting for 100 Continue sends it.
    const refusal = refusedRoute(this.target.wire, req.method ?? "", rest);
    if (refusal !== undefined) {
      this.refused(refusal);
      return fail(res, 403, refusal);
    }
    const declared = Number(req.headers["content-length"] ?? 0);
    if (declared > MAX_REQUEST_BYTES) return tooLarge(res);
    if (req.headers.expect !== undefined) res.writeContinue();
    const headers: Record<string, string | string[]> = {};
    const dropped = [
      ...KEY_HEADERS,
      ...ACCOUNT_HEADERS,
      ...HOP_HEADERS,
      ...ANSWERED_HERE,
      ...namedHop(req.headers.connection),
    ];
    for (const [name, value] of Object.entries(req.headers)) {
      if (value !== undefined && !dropped.includes(name)) headers[name] = value;
    }
    Object.assign(headers, keyHeader(this.target.wire, this.target.api_key));
    // A compressed answer is no text a redactor can read: the provider is asked for none (the hop to the agent is
    // loopback, where compression saves nothing). One that compresses anyway is decoded below.
    headers["accept-encoding"] = "identity";
    const aborted = new AbortController();
    res.once("close", () => aborted.abort());
    const base = this.upstream.pathname.replace(/\/+$/, "");
    // The body goes on as it comes, never held whole: held, each of an agent's concurrent requests kept up to the
    // limit in Brain's memory, which every tenant's sessions share.
    const body =
      declared > 0 || req.headers["transfer-encoding"] !== undefined
        ? new Limited(req, this.idle)
        : undefined;
    const answer = await this.pool
      .request({
        origin: this.upstream.origin,
        path: `${base}${withoutQueryKey(rest)}`,
        method: req.method as "POST",
        headers,
        ...(body ? { body: Readable.from(body.chunks(), { objectMode: false }) } : {}),
        signal: aborted.signal,
      })
      .catch((err: Error) => {
        if (body?.over || body?.stalled) return undefined;
        throw err;
      });
    if (answer === undefined && body?.stalled) {
      return fail(
        res,
        408,
        `the request body sent nothing for ${BODY_IDLE_MS / 1000} s, the credential proxy's limit`,
      );
    }
    if (answer === undefined) return tooLarge(res);
    const encoding = answer.headers["content-encoding"];
    const decoder = decoderOf(Array.isArray(encoding) ? encoding.join(",") : encoding);
    if (decoder === undefined) {
      answer.body.destroy();
      return fail(
        res,
        502,
        `the provider's answer is encoded as ${JSON.stringify(encoding)}, which the credential proxy cannot decode to keep the key out of it`,
      );
    }
    const out = redactedHeaders(answer.headers, this.redactor);
    for (const name of [...HOP_HEADERS, ...REWRITTEN]) delete out[name];
    res.writeHead(answer.statusCode, out);
    res.flushHeaders();
    const through = [...(decoder ? [decoder] : []), redactingBody(this.redactor)];
    await pipeline([answer.body, ...through, res]).catch(() => answer.body.destroy());
  }

  /** The path after `/<token>` (with its query), or undefined when the request is not under the token. */
  private pathUnderToken(url: string): string | undefined {
    const prefix = `/${this.token}`;
    const head = Buffer.from(url.slice(0, prefix.length));
    if (head.length !== prefix.length || !timingSafeEqual(head, Buffer.from(prefix))) return undefined;
    const rest = url.slice(prefix.length);
    return rest === "" || rest.startsWith("/") || rest.startsWith("?") ? rest : undefined;
  }
}

/**
 * A request's body as it comes, cut off (`over`) once it passes MAX_REQUEST_BYTES: its sender did not declare it;
 * or (`stalled`) once it sends nothing while its idle timer runs: without one, a body that stops held its
 * connection, and the provider's, until Node's request timeout (300 s).
 */
class Limited {
  over = false;
  stalled = false;
  constructor(
    private readonly req: IncomingMessage,
    private readonly idle: ProxyTimer,
  ) {}

  async *chunks(): AsyncGenerator<Buffer> {
    const reading = (this.req as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
    let size = 0;
    for (let next = await this.next(reading); !next.done; next = await this.next(reading)) {
      const chunk = next.value;
      size += chunk.length;
      if (size > MAX_REQUEST_BYTES) {
        this.over = true;
        throw new Error("the request body is over the credential proxy's limit");
      }
      yield chunk;
    }
  }

  /** The next chunk; the timer runs only while the sender is awaited, not while the provider reads. */
  private next(reading: AsyncIterator<Buffer>): Promise<IteratorResult<Buffer>> {
    let disarm = () => {};
    const stalled = new Promise<never>((_, reject) => {
      disarm = this.idle(() => {
        this.stalled = true;
        reject(new Error("the request body stalled"));
      });
    });
    return Promise.race([reading.next(), stalled]).finally(disarm);
  }
}

/** The headers a Connection header names: hop-by-hop as well (RFC 9110 7.6.1), this connection's only. */
function namedHop(connection: string | undefined): string[] {
  const names = (connection ?? "").split(",").map((name) => name.trim().toLowerCase());
  return names.filter((name) => name !== "");
}

/**
 * The Gemini API reads a key from `?key=` as well as its header: the agent's token there is dropped too. On the
 * other wires, which take no key there, as well: a gateway in front of a provider may read one from it, and no CLI
 * sends one (Claude Code's only query is `?beta=true`).
 */
function withoutQueryKey(rest: string): string {
  const at = rest.indexOf("?");
  if (at < 0) return rest;
  const query = new URLSearchParams(rest.slice(at + 1));
  if (!query.has("key")) return rest;
  query.delete("key");
  const left = query.toString();
  return `${rest.slice(0, at)}${left ? `?${left}` : ""}`;
}

function fail(res: ServerResponse, status: number, message: string): void {
  if (res.headersSent) return void res.destroy();
  res.writeHead(status, { "content-type": "application/json", connection: "close" });
  res.end(JSON.stringify({ type: "error", error: { type: "brain_credential_proxy", message } }));
}

function tooLarge(res: ServerResponse): void {
  fail(
    res,
    413,
    `the request body is larger than the credential proxy's limit of ${MAX_REQUEST_BYTES} bytes`,
  );
}
