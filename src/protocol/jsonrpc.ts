// JSON-RPC 2.0 over one line-delimited stream, both ways: Brain's side of codex app-server and of nui's extension
// hosts, and the host side in sdk/ts/nui. One JSON object per line, split on "\n" only (4 MiB cap). The peers
// are third-party: a line that is no JSON-RPC message is a warning, not a failure.
import { FastLineSplitter } from "./fast-lines.js";
import { FramingError, LineSplitter, sizeOf } from "./ndjson.js";

export type RpcId = number | string;

export type RpcMessage =
  | { kind: "response"; id: RpcId; result?: unknown; error?: { code?: number; message: string } }
  | { kind: "notification"; method: string; params: unknown }
  | { kind: "request"; id: RpcId; method: string; params: unknown };

export type DecodedRpc = { ok: true; message: RpcMessage } | { ok: false; reason: string };

const isId = (v: unknown): v is RpcId => typeof v === "number" || typeof v === "string";

/** What a message quotes of a peer's text (a line, a method name, an id): the peer may send megabytes of it. */
export function clip(text: string, max = 200): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/** Decodes one parsed JSON value. Never throws. Checked by hand, not by a schema: this runs once per event. */
export function decodeRpcMessage(value: unknown): DecodedRpc {
  if (!value || typeof value !== "object" || Array.isArray(value)) {
    return { ok: false, reason: "not a JSON-RPC message (a JSON object)" };
  }
  const obj = value as Record<string, unknown>;
  if ("method" in obj) {
    const { method, id, params } = obj;
    if (typeof method !== "string" || !method)
      return { ok: false, reason: 'a "method" must be a non-empty string' };
    if (id === undefined || id === null)
      return { ok: true, message: { kind: "notification", method, params } };
    if (!isId(id)) return { ok: false, reason: "a request id must be a number or a string" };
    return { ok: true, message: { kind: "request", id, method, params } };
  }
  if ("result" in obj || "error" in obj) {
    const { id, result, error } = obj;
    if (!isId(id)) return { ok: false, reason: "a response needs an id and a result or an error" };
    if (error === undefined || error === null) return { ok: true, message: { kind: "response", id, result } };
    if (typeof error !== "object") return { ok: false, reason: "a response error must be an object" };
    const e = error as { code?: unknown; message?: unknown };
    // An error without a message still fails its request: its JSON says what went wrong.
    const message = typeof e.message === "string" ? e.message : JSON.stringify(error);
    const code = typeof e.code === "number" ? { code: e.code } : {};
    return { ok: true, message: { kind: "response", id, result, error: { ...code, message } } };
  }
  return { ok: false, reason: 'a JSON-RPC message has "method", "result" or "error"' };
}

/** Decodes one line. Never throws. */
export function decodeRpcLine(line: string): DecodedRpc {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (err) {
    return { ok: false, reason: `not JSON (${(err as Error).message})` };
  }
  return decodeRpcMessage(value);
}

/** A JSON-RPC error reply, kept apart so callers can tell "the peer said no" from "the peer is gone". */
export class RpcError extends Error {
  override name = "RpcError";
  constructor(
    readonly method: string,
    readonly code: number | undefined,
    message: string,
  ) {
    super(message);
  }
}

export interface RpcPeerOptions {
  /** Prefixes error messages (`codex: "turn/start" failed: ...`); without it the peer's own message is kept. */
  label?: string;
  /** Who the peer is, in warnings ("extension host"); default "the peer". */
  who?: string;
  /** Whether frames carry `"jsonrpc": "2.0"` (codex app-server leaves it out). */
  versionField?: boolean;
  onNotification(method: string, params: unknown): void;
  /** A request from the peer. Without a handler it is refused with -32601 and a warning. */
  onRequest?(id: RpcId, method: string, params: unknown): void;
  /** A line that is no JSON-RPC message, an answer to no request, a refused request. */
  onWarning?(message: string): void;
  /**
   * Takes a line wholly inside a chunk straight from its bytes when it can: returns where the next line starts,
   * or -1 (having done nothing) to leave it to the decode here. What it takes it must handle as the decode would.
   */
  fastLine?(chunk: Buffer, pos: number, view: DataView): number;
  /** The error a request that timed out fails with (default: an RpcError saying so). */
  timeoutError?(method: string, timeoutMs: number): Error;
  /**
   * The longest line the peer reads, when it has a limit, and what to tell the caller whose message is longer: such a
   * request fails at once with a FramingError instead of being sent (the peer would drop the line, or the stream,
   * and never answer); a notification or reply is not sent, with a warning.
   */
  maxLine?: { bytes: number; reader: string; advice: (method: string) => string };
}

interface Pending {
  method: string;
  resolve(result: unknown): void;
  reject(err: Error): void;
  timer?: NodeJS.Timeout;
}

export class RpcPeer {
  private readonly pending = new Map<number, Pending>();
  private readonly splitter: LineSplitter | FastLineSplitter;
  private nextId = 1;
  private broken: Error | undefined;

  constructor(
    private readonly write: (line: string) => void,
    private readonly options: RpcPeerOptions,
  ) {
    const fastLine = options.fastLine;
    this.splitter = fastLine
      ? new FastLineSplitter((line) => this.onLine(line), fastLine)
      : new LineSplitter((line) => this.onLine(line));
  }

  /** Feeds bytes from the peer. Throws FramingError when a line passes 4 MiB: the caller ends the stream. */
  feed(chunk: Buffer | string): void {
    this.splitter.push(typeof chunk === "string" ? Buffer.from(chunk) : chunk);
  }

  /** The peer's stream ended: throws FramingError when it ended in the middle of a line (which is lost). */
  end(): void {
    this.splitter.end();
  }

  /** `timeoutMs` 0: no timeout (a run may stream for as long as it works). */
  request(method: string, params: unknown, timeoutMs = 0): Promise<unknown> {
    if (this.broken) return Promise.reject(this.broken);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const pending: Pending = { method, resolve, reject };
      if (timeoutMs > 0) {
        pending.timer = setTimeout(() => {
          this.pending.delete(id);
          reject(
            this.options.timeoutError?.(method, timeoutMs) ??
              new RpcError(
                method,
                undefined,
                this.prefix(`no answer to "${method}" within ${timeoutMs / 1000} s`),
              ),
          );
        }, timeoutMs);
      }
      const line = this.line({ id, method, params });
      const over = this.overLimit(line, method);
      if (over !== undefined) {
        clearTimeout(pending.timer);
        return reject(new FramingError(this.prefix(over)));
      }
      this.pending.set(id, pending);
      this.write(line);
    });
  }

  /** Whether it was sent: not when the stream is gone, nor when it is longer than the peer reads (maxLine). */
  notify(method: string, params?: unknown): boolean {
    return this.send(params === undefined ? { method } : { method, params });
  }

  respond(id: RpcId | null, result: unknown): void {
    this.send({ id, result });
  }

  respondError(id: RpcId | null, code: number, message: string): void {
    this.send({ id, error: { code, message } });
  }

  /** The stream is gone: every request in flight fails with `err`, and so does every later one. */
  fail(err: Error): void {
    if (this.broken) return;
    this.broken = err;
    for (const [id, pending] of this.pending) {
      clearTimeout(pending.timer);
      this.pending.delete(id);
      pending.reject(err);
    }
  }

  /** One parsed JSON value from the peer, for callers that split and parse lines themselves. */
  handle(value: unknown): void {
    const decoded = decodeRpcMessage(value);
    if (!decoded.ok)
      return this.options.onWarning?.(`${this.who} wrote no JSON-RPC message (${decoded.reason})`);
    this.dispatch(decoded.message);
  }

  private onLine(line: string): void {
    if (!line.trim()) return;
    const decoded = decodeRpcLine(line);
    if (!decoded.ok) {
      return this.options.onWarning?.(
        `${this.who} wrote a line that is not JSON-RPC (${decoded.reason}): ${clip(line)}`,
      );
    }
    this.dispatch(decoded.message);
  }

  private dispatch(message: RpcMessage): void {
    switch (message.kind) {
      case "notification":
        return this.options.onNotification(message.method, message.params);
      case "request":
        if (this.options.onRequest) return this.options.onRequest(message.id, message.method, message.params);
        // Say so, so the peer does not wait forever.
        this.respondError(message.id, -32601, `method not found: "${clip(message.method)}"`);
        return this.options.onWarning?.(
          `${this.who} called "${clip(message.method)}", which is not served here`,
        );
      case "response": {
        // Some peers echo the id as a string: "7" answers request 7.
        const id = typeof message.id === "number" ? message.id : Number(message.id);
        const pending = this.pending.get(id);
        if (!pending)
          return this.options.onWarning?.(
            `answer for unknown request id ${clip(JSON.stringify(message.id))} ignored`,
          );
        this.pending.delete(id);
        clearTimeout(pending.timer);
        if (message.error) {
          const text = this.prefix(
            `"${pending.method}" failed: ${message.error.message}`,
            message.error.message,
          );
          pending.reject(new RpcError(pending.method, message.error.code, text));
        } else pending.resolve(message.result);
      }
    }
  }

  private get who(): string {
    return this.options.who ?? "the peer";
  }

  private prefix(labelled: string, bare = labelled): string {
    return this.options.label ? `${this.options.label}: ${labelled}` : bare;
  }

  private send(message: Record<string, unknown>): boolean {
    if (this.broken) return false;
    const line = this.line(message);
    const over = this.overLimit(line, typeof message.method === "string" ? message.method : "a reply");
    if (over !== undefined) {
      this.options.onWarning?.(`${over}; not sent`);
      return false;
    }
    this.write(line);
    return true;
  }

  private line(message: Record<string, unknown>): string {
    const framed = this.options.versionField === false ? message : { jsonrpc: "2.0", ...message };
    return `${JSON.stringify(framed)}\n`;
  }

  /** Why `line` cannot go to a peer that reads lines of at most maxLine bytes, if it cannot. */
  private overLimit(line: string, method: string): string | undefined {
    const limit = this.options.maxLine;
    // A UTF-8 byte is at most three per UTF-16 unit: most lines are surely short enough without counting.
    if (limit === undefined || line.length * 3 <= limit.bytes) return undefined;
    const bytes = Buffer.byteLength(line) - 1;
    if (bytes <= limit.bytes) return undefined;
    return `${method} of ${bytes} bytes is over the ${sizeOf(limit.bytes)} line ${limit.reader} reads: ${limit.advice(method)}`;
  }
}
