// The SSE benchmarks' baseline: a plain node:http SSE server fed by the same runner child over the same pipe,
// with nothing of Brain in between: LineSplitter + JSON.parse of each runner line, the event formatted as
// Brain formats it, one coalesced write per tick to every watcher. No validation, no session, no durable log.
import { randomUUID } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { minimalEnvironment } from "../../src/harnesses/process/environment.js";
import { encodeLine, LineSplitter } from "../../src/protocol/ndjson.js";
import { spawnTracked, withTimeout } from "./cleanup.js";

interface Frame {
  id?: string;
  event?: string;
  data?: unknown;
  result?: unknown;
}

export class RawSseRelay {
  private readonly server = http.createServer((_req, res) => this.watch(res));
  private readonly watchers = new Set<http.ServerResponse>();
  private readonly child;
  private readonly replies = new Map<string, () => void>();
  private seq = 0;
  private pending: string[] = [];
  private scheduled = false;

  constructor(runner: string, dir: string) {
    this.child = spawnTracked(process.execPath, [runner], {
      stdio: ["pipe", "pipe", "inherit"],
      env: minimalEnvironment(process.env),
    });
    const splitter = new LineSplitter((line) => this.line(JSON.parse(line) as Frame));
    this.child.stdout!.on("data", (chunk: Buffer) => splitter.push(chunk));
    this.send("open", { session_id: "raw", dir, config: {}, tools: [], provider: {} });
  }

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/events`;
  }

  get lastSeq(): number {
    return this.seq;
  }

  /** Sends a prompt and resolves when the runner replies (its turn.settled is queued by then). */
  prompt(text: string): Promise<void> {
    return withTimeout(
      new Promise<void>((resolve) => this.send("prompt", { text }, resolve)),
      120_000,
      `raw relay prompt "${text}"`,
    );
  }

  async close(): Promise<void> {
    for (const res of this.watchers) res.destroy();
    this.child.stdin!.end();
    this.child.kill("SIGKILL");
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private send(method: string, params: unknown, onReply?: () => void): void {
    const id = randomUUID();
    if (onReply) this.replies.set(id, onReply);
    const turn = method === "prompt" ? { turn: randomUUID() } : {};
    this.child.stdin!.write(encodeLine({ attachment: "a", ...turn, id, method, params }));
  }

  private watch(res: http.ServerResponse): void {
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    res.write("retry: 1000\n\n");
    this.watchers.add(res);
    res.on("close", () => this.watchers.delete(res));
  }

  private line(frame: Frame): void {
    if (frame.event === "assistant.delta") {
      this.emit("assistant.delta", frame.data);
    } else if (frame.id && ("result" in frame || "error" in frame)) {
      const reply = this.replies.get(frame.id);
      this.replies.delete(frame.id);
      if (reply) {
        this.emit("turn.settled", { status: "completed" });
        reply();
      }
    }
  }

  private emit(type: string, data: unknown): void {
    const seq = ++this.seq;
    this.pending.push(`id: ${seq}\ndata: ${JSON.stringify({ seq, type, data })}\n\n`);
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      const text = this.pending.join("");
      this.pending = [];
      for (const res of this.watchers) res.write(text);
    });
  }
}
