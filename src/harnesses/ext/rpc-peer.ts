// Brain's side of a JSON-RPC 2.0 conversation with a nui extension host over one byte stream (a child's
// stdio or a TCP socket): requests correlated by id, `harness.event` notifications handed on, lines split on
// "\n" only. The host is third-party code: a line that is no JSON-RPC message is a warning, not a failure (nui
// skips such lines too); a line over 4 MiB breaks the stream.
import { LineSplitter } from "../../protocol/ndjson.js";
import { decodeRpcLine, rpcError, rpcNotification, rpcRequest } from "../../protocol/nui/jsonrpc.js";

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

export interface RpcPeerEvents {
  onNotification(method: string, params: unknown): void;
  onWarning(message: string): void;
}

interface Pending {
  method: string;
  resolve(result: unknown): void;
  reject(err: Error): void;
  timer?: NodeJS.Timeout;
}

export class RpcPeer {
  private readonly pending = new Map<number, Pending>();
  private readonly splitter = new LineSplitter((line) => this.onLine(line));
  private nextId = 1;
  private broken: Error | undefined;

  constructor(
    private readonly write: (text: string) => void,
    private readonly events: RpcPeerEvents,
  ) {}

  /** Feeds bytes from the host. Throws FramingError when a line passes 4 MiB: the caller ends the stream. */
  feed(chunk: Buffer): void {
    this.splitter.push(chunk);
  }

  /** `timeoutMs` 0: no timeout (harness.run streams for as long as the run works). */
  request(method: string, params: unknown, timeoutMs = 0): Promise<unknown> {
    if (this.broken) return Promise.reject(this.broken);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const pending: Pending = { method, resolve, reject };
      if (timeoutMs > 0) {
        pending.timer = setTimeout(() => {
          this.pending.delete(id);
          reject(new RpcError(method, undefined, `no answer to "${method}" within ${timeoutMs / 1000} s`));
        }, timeoutMs);
      }
      this.pending.set(id, pending);
      this.write(rpcRequest(id, method, params));
    });
  }

  notify(method: string, params: unknown): void {
    if (!this.broken) this.write(rpcNotification(method, params));
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

  private onLine(line: string): void {
    if (!line.trim()) return;
    const decoded = decodeRpcLine(line);
    if (!decoded.ok) {
      const shown = line.length > 200 ? `${line.slice(0, 200)}…` : line;
      return this.events.onWarning(
        `extension host wrote a line that is not JSON-RPC (${decoded.reason}): ${shown}`,
      );
    }
    const message = decoded.message;
    switch (message.kind) {
      case "notification":
        return this.events.onNotification(message.method, message.params);
      case "request":
        // The protocol has no host-to-Brain requests: say so, so the host does not wait forever.
        this.write(rpcError(message.id, -32601, `Brain does not serve method "${message.method}"`));
        return this.events.onWarning(`extension host called "${message.method}", which Brain does not serve`);
      case "response": {
        // Some hosts echo the id as a string: "7" answers request 7.
        const id = typeof message.id === "number" ? message.id : Number(message.id);
        const pending = this.pending.get(id);
        if (!pending)
          return this.events.onWarning(`answer for unknown request id ${JSON.stringify(message.id)} ignored`);
        this.pending.delete(id);
        clearTimeout(pending.timer);
        if (message.error)
          pending.reject(new RpcError(pending.method, message.error.code, message.error.message));
        else pending.resolve(message.result);
      }
    }
  }
}
