// JSON-RPC 2.0 dispatch for one connection (stdio or a TCP socket): harness.info, harness.run (asynchronous,
// so cancel is read while it works), harness.cancel, harness.shutdown, and Brain's harness.hitl_response.
// Framing and decoding are Brain's own JSON-RPC peer (src/protocol/jsonrpc.ts).

import { type RpcId, RpcPeer } from "../../../src/protocol/jsonrpc.js";
import { FramingError } from "../../../src/protocol/ndjson.js";
import type { NuiAgent } from "./agent.js";
import { HitlWaiters } from "./hitl.js";
import { guarded } from "./run.js";

type Params = Record<string, unknown>;

export class RpcConnection {
  private readonly runs = new Map<string, AbortController>();
  private readonly waiters = new HitlWaiters();
  private readonly peer: RpcPeer;

  constructor(
    private readonly agent: NuiAgent,
    write: (line: string) => void,
    /** Called after harness.shutdown was answered. */
    private readonly onShutdown: () => void,
  ) {
    this.peer = new RpcPeer(write, {
      who: "Brain",
      onRequest: (id, method, params) => this.handle(id, method, params),
      onNotification: (method, params) => this.handle(null, method, params),
      onWarning: () => process.stderr.write(`[${agent.name}] ignored a line that is not JSON-RPC\n`),
    });
  }

  /** Feeds raw text; complete lines (split on "\n" only) are handled. */
  feed(text: string): void {
    try {
      this.peer.feed(text);
    } catch (err) {
      if (!(err instanceof FramingError)) throw err;
      process.stderr.write(`[${this.agent.name}] ${err.message}: the connection is ended\n`);
      this.end();
    }
  }

  /** The connection is gone: every run it started is cancelled. */
  end(): void {
    for (const [runId, controller] of this.runs) {
      controller.abort();
      this.waiters.cancelRun(runId);
    }
  }

  private handle(id: RpcId | null, method: string, raw: unknown): void {
    const params = (raw ?? {}) as Params;
    switch (method) {
      case "harness.info":
        return this.peer.respond(id, this.agent.info());
      case "harness.run":
        return void this.run(id, params);
      case "harness.cancel": {
        const runId = String(params.runId ?? "");
        this.runs.get(runId)?.abort();
        this.waiters.cancelRun(runId);
        return void guarded(this.agent, "onCancel", () => this.agent.onCancel(runId)).then(() =>
          this.peer.respond(id, { ok: true }),
        );
      }
      case "harness.shutdown":
        return void guarded(this.agent, "onShutdown", () => this.agent.onShutdown()).then(() => {
          this.peer.respond(id, { ok: true });
          this.onShutdown();
        });
      case "harness.hitl_response":
        return this.waiters.answer(params);
      default:
        if (id !== null) this.peer.respondError(id, -32601, `method not found: ${method}`);
    }
  }

  private async run(id: RpcId | null, params: Params): Promise<void> {
    const controller = new AbortController();
    const runId = typeof params.runId === "string" && params.runId ? params.runId : undefined;
    if (runId) this.runs.set(runId, controller);
    const result = await this.agent.execute(params, {
      emit: (event) => this.peer.notify("harness.event", event),
      waiters: this.waiters,
      signal: controller.signal,
    });
    this.runs.delete(result.runId);
    this.peer.respond(id, { runId: result.runId, ...(result.cancelled ? { cancelled: true } : {}) });
  }
}
