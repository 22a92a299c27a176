// JSON-RPC 2.0 dispatch for one connection (stdio or a TCP socket): harness.info, harness.run (asynchronous,
// so cancel is read while it works), harness.cancel, harness.shutdown, and Brain's harness.hitl_response. A TCP
// connection first has to present the token of the host's connection file (Brain's harness.authenticate).
// Framing and decoding are Brain's own JSON-RPC peer (src/protocol/jsonrpc.ts).

import { type RpcId, RpcPeer } from "../../../src/protocol/jsonrpc.js";
import { FramingError } from "../../../src/protocol/ndjson.js";
import type { NuiAgent } from "./agent.js";
import { sameToken } from "./connection-file.js";
import { HitlWaiters } from "./hitl.js";
import { guarded } from "./run.js";

type Params = Record<string, unknown>;

/** What a connection must present before it is served, and how to end one that did not. */
export interface ConnectionAuth {
  token: string;
  /** Called once the refusal is written: the connection is to be ended. */
  refused: () => void;
}

export class RpcConnection {
  private readonly runs = new Map<string, AbortController>();
  private readonly waiters = new HitlWaiters();
  private readonly peer: RpcPeer;
  /** Served: it presented the token (or needs none). */
  authenticated: boolean;
  /** Refused: nothing more it sends is read. */
  private refused = false;
  /** A line passed the cap: nothing more it sends is read. */
  private broken = false;

  constructor(
    private readonly agent: NuiAgent,
    write: (line: string) => void,
    /** Called after harness.shutdown was answered. */
    private readonly onShutdown: () => void,
    /** None: every message is served (stdio: the pipe is the host's parent's alone). */
    private readonly auth?: ConnectionAuth,
  ) {
    this.authenticated = auth === undefined;
    this.peer = new RpcPeer(write, {
      who: "Brain",
      onRequest: (id, method, params) => this.handle(id, method, params),
      onNotification: (method, params) => this.handle(null, method, params),
      onWarning: () => {
        if (!this.authenticated)
          return this.refuse("a line that is not JSON-RPC before harness.authenticate");
        process.stderr.write(`[${agent.name}] ignored a line that is not JSON-RPC\n`);
      },
    });
  }

  /**
   * Feeds raw bytes; complete lines (split on "\n" only) are handled. False once a line passed the cap: the stream
   * cannot be split reliably after it (what follows may be the rest of that line), so nothing more is read and the
   * caller ends the connection, as Brain ends a host that writes such a line.
   */
  feed(chunk: Buffer | string): boolean {
    if (this.broken) return false;
    try {
      this.peer.feed(chunk);
      return true;
    } catch (err) {
      if (!(err instanceof FramingError)) throw err;
      this.broken = true;
      process.stderr.write(`[${this.agent.name}] ${err.message}: the connection is ended\n`);
      this.end();
      return false;
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
    if (this.refused) return;
    if (!this.authenticated) return this.authenticate(id, method, params);
    switch (method) {
      case "harness.info":
        return this.peer.respond(id, this.agent.info());
      case "harness.run":
        return void this.run(id, params);
      case "harness.cancel": {
        const runId = String(params.runId ?? "");
        const run = this.runs.get(runId);
        run?.abort();
        this.waiters.cancelRun(runId);
        // onCancel knows a run by its id alone: only this connection's run under way is its to stop, not another
        // connection's of the same id (a TCP host serves other sessions' too), nor one that has ended.
        if (!run) return this.peer.respond(id, { ok: true });
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

  /** The first message of a connection that must authenticate: the right token, or the connection's end. */
  private authenticate(id: RpcId | null, method: string, params: Params): void {
    const auth = this.auth!;
    if (method === "harness.authenticate" && sameToken(params.token, auth.token)) {
      this.authenticated = true;
      if (id !== null) this.peer.respond(id, { ok: true });
      return;
    }
    const why =
      method === "harness.authenticate"
        ? "the token is not the one in this host's connection file"
        : `"${method.slice(0, 100)}" before harness.authenticate`;
    if (id !== null) {
      this.peer.respondError(
        id,
        -32001,
        `this host serves a connection only once it sent harness.authenticate {token} with the token of its connection file (refused: ${why})`,
      );
    }
    this.refuse(why);
  }

  private refuse(why: string): void {
    if (this.refused) return;
    this.refused = true;
    process.stderr.write(`[${this.agent.name}] refused a connection: ${why}\n`);
    this.auth?.refused();
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
