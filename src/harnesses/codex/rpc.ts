// JSON-RPC 2.0 as `codex app-server` speaks it on stdio: one JSON object per line, the "jsonrpc" field left out.
// Requests go both ways: ours get replies by id; the server's (approvals) carry both `id` and `method`.
import { HarnessError } from "../../core/harness.js";

// biome-ignore lint/suspicious/noExplicitAny: third-party messages, decoded leniently
type Json = any;

export interface RpcHandlers {
  onNotification(method: string, params: Json): void;
  onRequest(id: string | number, method: string, params: Json): void;
}

interface Waiting {
  method: string;
  resolve(result: Json): void;
  reject(err: Error): void;
  timer?: NodeJS.Timeout;
}

/** A JSON-RPC error reply, kept apart so callers can tell "Codex said no" from "Codex is gone". */
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

export class RpcConnection {
  private nextId = 1;
  private readonly waiting = new Map<number, Waiting>();

  constructor(
    private readonly label: string,
    private readonly write: (line: string) => void,
    private readonly handlers: RpcHandlers,
  ) {}

  request(method: string, params: unknown, timeoutMs = 0): Promise<Json> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const waiting: Waiting = { method, resolve, reject };
      if (timeoutMs > 0) {
        waiting.timer = setTimeout(() => {
          this.waiting.delete(id);
          reject(
            new HarnessError(
              "brain_error",
              `${this.label}: no answer to "${method}" within ${timeoutMs / 1000} s`,
            ),
          );
        }, timeoutMs);
      }
      this.waiting.set(id, waiting);
      this.write(`${JSON.stringify({ id, method, params })}\n`);
    });
  }

  notify(method: string, params?: unknown): void {
    this.write(`${JSON.stringify(params === undefined ? { method } : { method, params })}\n`);
  }

  respond(id: string | number, result: unknown): void {
    this.write(`${JSON.stringify({ id, result })}\n`);
  }

  respondError(id: string | number, code: number, message: string): void {
    this.write(`${JSON.stringify({ id, error: { code, message } })}\n`);
  }

  /** One decoded line from the server. Unknown shapes are ignored. */
  handle(message: Json): void {
    if (message === null || typeof message !== "object") return;
    const hasId = typeof message.id === "number" || typeof message.id === "string";
    if (typeof message.method === "string") {
      if (hasId) this.handlers.onRequest(message.id, message.method, message.params);
      else this.handlers.onNotification(message.method, message.params);
      return;
    }
    if (!hasId) return;
    const waiting = this.waiting.get(Number(message.id));
    if (!waiting) return;
    this.waiting.delete(Number(message.id));
    clearTimeout(waiting.timer);
    if (message.error) {
      const code = typeof message.error.code === "number" ? message.error.code : undefined;
      waiting.reject(
        new RpcError(
          waiting.method,
          code,
          `${this.label}: "${waiting.method}" failed: ${errorText(message.error)}`,
        ),
      );
    } else {
      waiting.resolve(message.result);
    }
  }

  /** Rejects everything still waiting (the process is gone). */
  failAll(err: Error): void {
    for (const waiting of this.waiting.values()) {
      clearTimeout(waiting.timer);
      waiting.reject(err);
    }
    this.waiting.clear();
  }
}

/**
 * The text of an error reply. Codex's output is third-party input: `String()` throws on `{"toString":1}` and
 * `JSON.stringify` on an error nested thousands deep, and a throw here would escape the stdout handler.
 */
function errorText(error: Json): string {
  if (typeof error?.message === "string") return error.message;
  try {
    return JSON.stringify(error).slice(0, 500);
  } catch {
    return "an error reply that cannot be shown";
  }
}
