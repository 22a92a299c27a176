// NuiAgent: subclass it, implement run(), and serve it over stdio (an extension host Brain or nui starts), TCP
// (a host that writes a connection file) or HTTP/SSE (a remote or docker agent, see http-server.ts).
//
//   class Echo extends NuiAgent {
//     name = "echo";
//     async *run(message: string) { yield `You said: ${message}`; }
//   }
//   new Echo().serveStdio();
//
// Runs are asynchronous, so harness.cancel is handled while run() works: onCancel() is called, the run's
// signal aborts, and nothing the run yields afterwards is sent.
import { catchRunLeaks, type RunSink, runAgent } from "./run.js";
import type { Chunk, RunContext } from "./types.js";

export abstract class NuiAgent {
  name = "nui-agent";
  version = "0.1.0";
  capabilities: string[] = ["run", "cancel", "shutdown"];

  /** Yields text (strings) and raw events (objects); may also just return after emitting through ctx. */
  abstract run(
    message: string,
    runId: string,
    ctx: RunContext,
  ): AsyncIterable<Chunk> | Iterable<Chunk> | Promise<void> | void;

  /** Called as soon as a cancel for `runId`, a run of the connection under way, arrives. */
  onCancel(_runId: string): void {}

  /** Called before the host exits. */
  onShutdown(): void | Promise<void> {}

  /** The agent's own session id, sent in `done`; it comes back as `sessionId` with the next run. */
  getSessionId(_runId: string): string | undefined {
    return undefined;
  }

  /** The id `harness.info` reports: NUI_HARNESS_ID when the host serves several harnesses. */
  harnessId(): string {
    return process.env.NUI_HARNESS_ID || this.name;
  }

  info(): { id: string; name: string; version: string; capabilities: string[] } {
    return { id: this.harnessId(), name: this.name, version: this.version, capabilities: this.capabilities };
  }

  /** Runs one run to its end, sending each event to `sink`. Used by every transport. */
  execute(params: Record<string, unknown>, sink: RunSink): Promise<{ runId: string; cancelled: boolean }> {
    return runAgent(this, params, sink);
  }

  async serveStdio(
    input: NodeJS.ReadableStream = process.stdin,
    output: NodeJS.WritableStream = process.stdout,
  ) {
    catchRunLeaks(this.name);
    const { serveStream } = await import("./stdio.js");
    return serveStream(this, input, output);
  }

  async serveTcp(options: { connectionsDir?: string; connectionId?: string } = {}) {
    catchRunLeaks(this.name);
    const { serveTcp } = await import("./tcp.js");
    return serveTcp(this, options);
  }
}
