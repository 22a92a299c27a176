// A client for nui's HTTP/SSE agents (docs/protocol.md#httpsse-remote-docker-devcontainer-extension-hosts-with-transport-http): GET /info, POST /run streaming `text/event-stream`, POST /cancel,
// POST /shutdown. The stream is read by the shared SSE client (src/protocol/sse.ts); each event's data is one
// harness event object.
import { Agent } from "undici";
import { fetchFailure } from "../../core/fetch-failure.js";
import { HarnessError } from "../../core/harness.js";
import { headOf } from "../../core/redact.js";
import { MAX_ANSWER_BYTES, responseText } from "../../core/response-text.js";
import { type DecodedHarnessEvent, decodeHarnessEvent } from "../../protocol/nui/harness-event.js";
import { HarnessInfo, type HttpRunBody } from "../../protocol/nui/jsonrpc.js";
import { readSse } from "../../protocol/sse.js";

/** POST /run body: nui's fields, plus `runId` so /cancel can name the run (nui's own servers read it). */
export type RunBody = HttpRunBody;

/** Of an error answer, only its head is quoted. */
const ERROR_HEAD_BYTES = 64 << 10;
/** Of a run's body, the characters kept to quote when it held no event. */
const HEAD_CHARS = 1000;

/**
 * Every request to an agent: a redirect is not followed. An agent someone else runs could otherwise point Brain
 * at an address only Brain's host reaches (a cloud metadata service, the daemon's own port) and have the answer
 * quoted back in the error a client reads, or have a run's body (its message and env) posted there.
 */
const NO_REDIRECTS = { redirect: "manual" } as const;

export interface HttpAgentClientOptions {
  /**
   * How long POST /run may go without a byte before it is cut; 0 (the default) never cuts it. An agent thinking
   * silently for minutes is normal, and an interrupt (the run's signal) is how a run is stopped, so the run
   * stream gets none of fetch's default 300 s body and header timeouts.
   */
  runIdleTimeoutMs?: number;
  /** Sent with every request as `Authorization: Bearer` (the token Brain gave the agent's container). */
  token?: string;
  /**
   * Every request goes to this Unix socket instead of the URL's host and port (a `network: "none"` container's
   * agent, which then answers on no port of this host's loopback); the URL still names the agent in errors.
   */
  socketPath?: string;
  /**
   * How the agent's process ended, when Brain runs it and it did (an extension host it started): said with a run
   * stream that broke, whose own error ("other side closed") does not say why.
   */
  agentEnd?: () => Promise<string | undefined>;
}

export class HttpAgentClient {
  readonly baseUrl: string;
  /**
   * This agent's own connections, destroyed by `close`, with the idle timeouts of `runIdleTimeoutMs` (the other
   * requests have their own deadlines). On fetch's shared pool, and on a pool no one closed, every session left
   * its idle connections open for as long as the agent kept them (minutes behind a proxy), and the next agent
   * on the same address (a container given a port a removed one had) could be sent a request on a dead one.
   */
  private readonly pool: Agent;
  /** The headers every request carries (the agent's token, when it has one). */
  private readonly auth: Record<string, string>;
  /** What every request is sent with: no redirects, and this agent's own connections. */
  private readonly via: { redirect: "manual"; dispatcher: Agent };
  private readonly agentEnd: (() => Promise<string | undefined>) | undefined;

  constructor(
    baseUrl: string,
    /** For messages: the harness name. */
    readonly name: string,
    options: HttpAgentClientOptions = {},
  ) {
    this.baseUrl = baseUrl.replace(/\/+$/, "");
    const idle = options.runIdleTimeoutMs ?? 0;
    const connect = options.socketPath ? { connect: { socketPath: options.socketPath } } : {};
    this.pool = new Agent({ bodyTimeout: idle, headersTimeout: idle, ...connect });
    this.via = { ...NO_REDIRECTS, dispatcher: this.pool };
    this.auth = options.token ? { authorization: `Bearer ${options.token}` } : {};
    this.agentEnd = options.agentEnd;
  }

  /** GET /info: the health check. Throws a HarnessError saying what failed and where. */
  async info(timeoutMs: number): Promise<HarnessInfo> {
    const url = `${this.baseUrl}/info`;
    const { response, text, over } = await this.exchange("GET", url, undefined, timeoutMs);
    if (!response.ok) {
      throw new HarnessError(
        "brain_error",
        `${this.name}: GET ${url} answered ${response.status}: ${headOf(text, 300)}`,
      );
    }
    if (over) {
      throw new HarnessError(
        "brain_error",
        `${this.name}: GET ${url} answered more than ${MAX_ANSWER_BYTES >> 20} MiB; it must answer {name, version, capabilities}`,
      );
    }
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new HarnessError(
        "brain_error",
        `${this.name}: GET ${url} did not answer JSON: ${headOf(text, 200)}`,
      );
    }
    const parsed = HarnessInfo.safeParse(body);
    if (!parsed.success) {
      throw new HarnessError(
        "brain_error",
        `${this.name}: GET ${url} must answer {name, version, capabilities}, got ${headOf(text, 200)}`,
      );
    }
    return parsed.data;
  }

  /**
   * POST /run: calls `onEvent` for each SSE event until the agent sends `done` or `error`, or the stream ends.
   * Resolves with how it ended. Rejects with a HarnessError when the agent cannot be reached or answers an
   * error status; an abort through `signal` resolves with "aborted". `beforeEvent` is awaited before each event is
   * handed on: while it waits, the stream is not read (the read gate's HeldReads.check).
   */
  async run(
    body: RunBody,
    signal: AbortSignal,
    onEvent: (decoded: DecodedHarnessEvent) => void,
    beforeEvent?: () => Promise<void>,
  ): Promise<"done" | "error" | "ended" | "aborted"> {
    const url = `${this.baseUrl}/run`;
    let response: Response;
    try {
      // Node's fetch is undici's and takes its dispatcher (RequestInit's type does not name it).
      const init: RequestInit & { dispatcher: Agent } = {
        ...this.via,
        method: "POST",
        headers: { ...this.auth, "content-type": "application/json", accept: "text/event-stream" },
        body: JSON.stringify(body),
        signal,
      };
      response = await fetch(url, init);
    } catch (err) {
      if (signal.aborted) return "aborted";
      throw new HarnessError("brain_error", `${this.name}: POST ${url} failed: ${fetchFailure(err)}`);
    }
    refuseRedirect(response, this.name, `POST ${url}`);
    if (!response.ok || !response.body) {
      const { text } = await responseText(response, ERROR_HEAD_BYTES).catch(() => ({ text: "" }));
      throw new HarnessError(
        "provider_error",
        `${this.name}: POST ${url} answered ${response.status}: ${headOf(text.trim(), 300)}`,
      );
    }
    let ended: "done" | "error" | undefined;
    let events = 0;
    let cutOff: string | undefined;
    const head = { text: "" };
    const sse = { dataLineEndsJsonEvent: true, onCutOff: (start: string) => (cutOff = start) };
    try {
      for await (const message of readSse(keepHead(response.body, head), sse)) {
        events++;
        await beforeEvent?.();
        let value: unknown;
        try {
          value = JSON.parse(message.data);
        } catch {
          onEvent({ ok: false, reason: `SSE data that is not JSON skipped: ${headOf(message.data, 200)}` });
          continue;
        }
        const decoded = decodeHarnessEvent(value);
        onEvent(decoded);
        // Stop reading once the run ended: some servers keep the connection open after `done`.
        if (decoded.ok && (decoded.event.type === "done" || decoded.event.type === "error")) {
          ended = decoded.event.type;
          break;
        }
      }
    } catch (err) {
      if (signal.aborted) return "aborted";
      const end = await this.agentEnd?.();
      throw new HarnessError(
        "brain_error",
        `${this.name}: the event stream of POST ${url} broke: ${fetchFailure(err)}${end ? `: ${end}` : ""}`,
      );
    }
    if (signal.aborted && !ended) return "aborted";
    if (cutOff !== undefined && events > 0) {
      // Not merely a stream that stopped: an event was on its way, and what the agent meant by it is lost.
      throw new HarnessError(
        "brain_error",
        `${this.name}: the event stream of POST ${url} ended in the middle of an event, before a done event: ${headOf(cutOff, 200)} (the agent, or a proxy between, cut the connection: its log says why)`,
      );
    }
    if (events === 0) {
      // Not one event: most likely no event stream at all (a JSON error, a web page), which is what to show.
      const type = response.headers.get("content-type") ?? "none";
      const said = head.text.trim() ? `: ${headOf(head.text.trim(), 300)}` : " an empty body";
      throw new HarnessError(
        "brain_error",
        `${this.name}: POST ${url} answered ${response.status} (Content-Type ${type}) without one SSE event; an agent streams its run as text/event-stream, "data: {json}" lines. It sent${said}`,
      );
    }
    return ended ?? "ended";
  }

  /** POST /cancel {runId}: best effort. */
  async cancel(runId: string, timeoutMs: number): Promise<void> {
    await this.post("/cancel", { runId }, timeoutMs);
  }

  /**
   * POST `path` with a JSON body, answered with JSON (Brain's own agent endpoints, /checkpoint and /verify).
   * Throws a HarnessError naming the endpoint and what the agent said.
   */
  async call(path: string, body: unknown, timeoutMs: number): Promise<Record<string, unknown>> {
    const url = `${this.baseUrl}${path}`;
    const { response, text, over } = await this.exchange("POST", url, body, timeoutMs);
    if (over && response.ok) {
      throw new HarnessError(
        "brain_error",
        `${this.name}: POST ${url} answered more than ${MAX_ANSWER_BYTES >> 20} MiB, more than Brain reads of an answer`,
      );
    }
    let value: unknown;
    try {
      value = over ? undefined : JSON.parse(text);
    } catch {
      value = undefined;
    }
    if (!response.ok || !value || typeof value !== "object" || Array.isArray(value)) {
      const said = (value as { error?: unknown } | undefined)?.error ?? headOf(text, 300);
      throw new HarnessError(
        "brain_error",
        `${this.name}: POST ${url} answered ${response.status}: ${String(said)}`,
      );
    }
    return value as Record<string, unknown>;
  }

  /** POST /shutdown: release the agent's resources (before `docker stop`). Best effort. */
  async shutdown(timeoutMs: number): Promise<void> {
    await this.post("/shutdown", {}, timeoutMs);
  }

  /** Closes this agent's connections (after its session's last request: /shutdown when it has one). */
  async close(): Promise<void> {
    await this.pool.destroy().catch(() => {});
  }

  /**
   * One request answered in JSON (GET /info, the POSTs of call()), within `timeoutMs`: its answer, read up to
   * what Brain reads of an answer (of an error status, its head). Throws a HarnessError when the agent cannot be
   * reached or answers a redirect.
   */
  private async exchange(
    method: "GET" | "POST",
    url: string,
    body: unknown,
    timeoutMs: number,
  ): Promise<{ response: Response; text: string; over: boolean }> {
    let response: Response;
    try {
      response = await fetch(url, {
        ...this.via,
        method,
        headers: method === "POST" ? { ...this.auth, "content-type": "application/json" } : this.auth,
        ...(method === "POST" ? { body: JSON.stringify(body) } : {}),
        signal: AbortSignal.timeout(timeoutMs),
      } as RequestInit);
    } catch (err) {
      throw new HarnessError("brain_error", `${this.name}: ${method} ${url} failed: ${fetchFailure(err)}`);
    }
    refuseRedirect(response, this.name, `${method} ${url}`);
    const { text, over } = await responseText(
      response,
      response.ok ? MAX_ANSWER_BYTES : ERROR_HEAD_BYTES,
    ).catch(() => ({ text: "", over: false }));
    return { response, text, over };
  }

  private async post(path: string, body: unknown, timeoutMs: number): Promise<void> {
    try {
      const response = await fetch(`${this.baseUrl}${path}`, {
        ...this.via,
        method: "POST",
        headers: { ...this.auth, "content-type": "application/json" },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(timeoutMs),
      } as RequestInit);
      await response.body?.cancel().catch(() => {});
    } catch {
      // best effort: the agent may be gone already
    }
  }
}

/** `body` as it is, the first characters it holds kept in `head` (for the error of a run that sent no event). */
function keepHead(body: ReadableStream<Uint8Array>, head: { text: string }): ReadableStream<Uint8Array> {
  const decoder = new TextDecoder();
  return body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, out) {
        if (head.text.length < HEAD_CHARS)
          head.text += decoder.decode(chunk, { stream: true }).slice(0, HEAD_CHARS);
        out.enqueue(chunk);
      },
    }),
  );
}

/** A redirect answer fails the request, naming it; its body is not read (it may be anyone's). */
function refuseRedirect(response: Response, name: string, request: string): void {
  if (response.status < 300 || response.status > 399) return;
  void response.body?.cancel().catch(() => {});
  throw new HarnessError(
    "brain_error",
    `${name}: ${request} answered a redirect (${response.status}); Brain does not follow an agent's redirects: give the agent's own address (config.options.url, or host and port)`,
  );
}
