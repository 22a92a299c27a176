// JSON-RPC 2.0 dispatch for one connection (stdio or a TCP socket): harness.info, harness.run (asynchronous,
// so cancel is read while it works), harness.cancel, harness.shutdown, and Brain's harness.hitl_response.
import type { NuiAgent } from "./agent.js";
import { HitlWaiters } from "./hitl.js";

interface Message {
  id?: number | string | null;
  method?: string;
  params?: Record<string, unknown>;
}

export class RpcConnection {
  private readonly runs = new Map<string, AbortController>();
  private readonly waiters = new HitlWaiters();
  private buffer = "";

  constructor(
    private readonly agent: NuiAgent,
    private readonly write: (line: string) => void,
    /** Called after harness.shutdown was answered. */
    private readonly onShutdown: () => void,
  ) {}

  /** Feeds raw text; complete lines (split on "\n" only) are handled. */
  feed(text: string): void {
    this.buffer += text;
    for (let nl = this.buffer.indexOf("\n"); nl !== -1; nl = this.buffer.indexOf("\n")) {
      const line = this.buffer.slice(0, nl).trim();
      this.buffer = this.buffer.slice(nl + 1);
      if (line) this.handle(line);
    }
  }

  /** The connection is gone: every run it started is cancelled. */
  end(): void {
    for (const [runId, controller] of this.runs) {
      controller.abort();
      this.waiters.cancelRun(runId);
    }
  }

  private send(message: Record<string, unknown>): void {
    this.write(`${JSON.stringify({ jsonrpc: "2.0", ...message })}\n`);
  }

  private handle(line: string): void {
    let msg: Message;
    try {
      msg = JSON.parse(line) as Message;
    } catch {
      process.stderr.write(`[${this.agent.name}] ignored a line that is not JSON\n`);
      return;
    }
    const params = msg.params ?? {};
    const id = msg.id ?? null;
    switch (msg.method) {
      case "harness.info":
        return this.send({ id, result: this.agent.info() });
      case "harness.run":
        return void this.run(id, params);
      case "harness.cancel": {
        const runId = String(params.runId ?? "");
        this.runs.get(runId)?.abort();
        this.waiters.cancelRun(runId);
        try {
          this.agent.onCancel(runId);
        } finally {
          this.send({ id, result: { ok: true } });
        }
        return;
      }
      case "harness.shutdown":
        return void Promise.resolve(this.agent.onShutdown()).finally(() => {
          this.send({ id, result: { ok: true } });
          this.onShutdown();
        });
      case "harness.hitl_response":
        return this.waiters.answer(params);
      default:
        if (id !== null)
          this.send({ id, error: { code: -32601, message: `method not found: ${msg.method}` } });
    }
  }

  private async run(id: Message["id"], params: Record<string, unknown>): Promise<void> {
    const controller = new AbortController();
    const runId = typeof params.runId === "string" && params.runId ? params.runId : undefined;
    if (runId) this.runs.set(runId, controller);
    const result = await this.agent.execute(params, {
      emit: (event) => this.send({ method: "harness.event", params: event }),
      waiters: this.waiters,
      signal: controller.signal,
    });
    this.runs.delete(result.runId);
    this.send({ id, result: { runId: result.runId, ...(result.cancelled ? { cancelled: true } : {}) } });
  }
}
