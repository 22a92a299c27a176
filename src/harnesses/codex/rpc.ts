// JSON-RPC 2.0 as `codex app-server` speaks it on stdio: the shared peer (src/protocol/jsonrpc.ts), with the
// "jsonrpc" field left out as codex does, errors labelled, and the requests Brain makes typed with the
// generated protocol types. Requests go both ways: the server's (approvals) carry both `id` and `method`.
import { HarnessError } from "../../core/harness.js";
import { type RpcId, RpcPeer } from "../../protocol/jsonrpc.js";
import type { InitializeParams } from "./generated/InitializeParams.js";
import type { InitializeResponse } from "./generated/InitializeResponse.js";
import type { ThreadResumeParams } from "./generated/v2/ThreadResumeParams.js";
import type { ThreadResumeResponse } from "./generated/v2/ThreadResumeResponse.js";
import type { ThreadStartParams } from "./generated/v2/ThreadStartParams.js";
import type { ThreadStartResponse } from "./generated/v2/ThreadStartResponse.js";
import type { TurnInterruptParams } from "./generated/v2/TurnInterruptParams.js";
import type { TurnInterruptResponse } from "./generated/v2/TurnInterruptResponse.js";
import type { TurnStartParams } from "./generated/v2/TurnStartParams.js";
import type { TurnStartResponse } from "./generated/v2/TurnStartResponse.js";
import type { TurnSteerParams } from "./generated/v2/TurnSteerParams.js";
import type { TurnSteerResponse } from "./generated/v2/TurnSteerResponse.js";

export { RpcError } from "../../protocol/jsonrpc.js";

/** The requests Brain makes, each with its params and its result. */
export interface CodexRequests {
  initialize: { params: InitializeParams; result: InitializeResponse };
  "thread/start": { params: ThreadStartParams; result: ThreadStartResponse };
  "thread/resume": { params: ThreadResumeParams; result: ThreadResumeResponse };
  "turn/start": { params: TurnStartParams; result: TurnStartResponse };
  "turn/steer": { params: TurnSteerParams; result: TurnSteerResponse };
  "turn/interrupt": { params: TurnInterruptParams; result: TurnInterruptResponse };
}

export interface RpcHandlers {
  onNotification(method: string, params: unknown): void;
  onRequest(id: RpcId, method: string, params: unknown): void;
}

export class RpcConnection {
  private readonly peer: RpcPeer;

  constructor(label: string, write: (line: string) => void, handlers: RpcHandlers) {
    this.peer = new RpcPeer(write, {
      label,
      versionField: false,
      onNotification: (method, params) => handlers.onNotification(method, params),
      onRequest: (id, method, params) => handlers.onRequest(id, method, params),
      timeoutError: (method, ms) =>
        new HarnessError("brain_error", `${label}: no answer to "${method}" within ${ms / 1000} s`),
    });
  }

  /**
   * The result is what codex's generated types promise; codex is third-party, so callers still check the
   * fields they depend on.
   */
  request<M extends keyof CodexRequests>(
    method: M,
    params: CodexRequests[M]["params"],
    timeoutMs = 0,
  ): Promise<Partial<CodexRequests[M]["result"]> | undefined> {
    return this.peer.request(method, params, timeoutMs) as Promise<Partial<CodexRequests[M]["result"]>>;
  }

  notify(method: string, params?: unknown): void {
    this.peer.notify(method, params);
  }

  respond(id: RpcId, result: unknown): void {
    this.peer.respond(id, result);
  }

  respondError(id: RpcId, code: number, message: string): void {
    this.peer.respondError(id, code, message);
  }

  /** One decoded line from the server. Unknown shapes are ignored. */
  handle(message: unknown): void {
    this.peer.handle(message);
  }

  /** Rejects everything still waiting (the process is gone), and every later request. */
  failAll(err: Error): void {
    this.peer.fail(err);
  }
}
