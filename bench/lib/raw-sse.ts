// The SSE benchmarks' baseline: a plain node:http SSE server fed by the same runner child over the same pipe,
// with nothing of Brain in between: LineSplitter + JSON.parse of each runner line, the event formatted as
// Brain formats it (the same fields, so watchers read the same bytes), one coalesced write per tick to every
// watcher. No validation, no session, no durable log.
//
// `durable`: the same relay with the one thing Brain's guarantee adds (an event is sent only once durable):
// each batch is made durable in a file, through libuv's thread pool as Brain's log does, before it goes to the
// watchers; events that arrive meanwhile form the next batch (group commit). Made durable as Brain's log makes it:
// one O_DSYNC write where its log uses one (Linux), else write + fdatasync. A write and an fdatasync here while
// Brain's log did one O_DSYNC write was two trips through the pool against Brain's one: a slower floor than any
// relay keeping the promise needs, which made Brain's delay look closer to the disk's cost than it is. The floor
// of any relay that keeps that promise on this disk.
import type { ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { minimalEnvironment } from "../../src/harnesses/process/environment.js";
import { encodeLine, LineSplitter } from "../../src/protocol/ndjson.js";
import { nodeLogIO, writeFlags } from "../../src/store/fs/log-io.js";
import { LIKE_BRAIN_RUNNER, spawnTracked, withTimeout } from "./cleanup.js";

/** A runner's line as the raw baselines read it (no validation). */
export interface Frame {
  attachment?: string;
  id?: string;
  turn?: string;
  event?: string;
  data?: unknown;
  result?: unknown;
}

/**
 * The runner as the SSE baselines start it: forked from the bench (once per bench), in a group of its own as
 * Brain's runners are, its stdout split and JSON.parsed line by line into `onFrame`.
 */
export function startRunner(runner: string, onFrame: (frame: Frame) => void): ChildProcess {
  const child = spawnTracked(process.execPath, [runner], {
    ...LIKE_BRAIN_RUNNER,
    stdio: ["pipe", "pipe", "inherit"],
    env: minimalEnvironment(process.env),
  });
  const splitter = new LineSplitter((line) => onFrame(JSON.parse(line) as Frame));
  child.stdout!.on("data", (chunk: Buffer) => splitter.push(chunk));
  return child;
}

export class RawSseRelay {
  private readonly server = http.createServer((_req, res) => this.watch(res));
  private readonly watchers = new Set<http.ServerResponse>();
  private readonly child;
  private readonly replies = new Map<string, () => void>();
  private seq = 0;
  pending: string[] = [];
  private scheduled = false;
  private readonly fd: number | undefined;
  private committing = false;
  private clock = { ms: -1, iso: "" };
  /** A session id as long as Brain's. */
  private readonly session = randomUUID();

  constructor(runner: string, dir: string, durable = false) {
    if (durable) this.fd = openDurable(`${dir}/events.log`);
    this.child = startRunner(runner, (frame) => this.line(frame));
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
    if (this.fd !== undefined) fs.closeSync(this.fd);
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
      this.emit("assistant.delta", frame.data, frame.turn);
    } else if (frame.id && ("result" in frame || "error" in frame)) {
      const reply = this.replies.get(frame.id);
      this.replies.delete(frame.id);
      if (reply) {
        this.emit("turn.settled", { status: "completed" }, frame.turn);
        reply();
      }
    }
  }

  /** Brain's event fields, in its order; like Brain, one timestamp string per millisecond. */
  private emit(type: string, data: unknown, turn: string | undefined): void {
    const seq = ++this.seq;
    const ms = Date.now();
    if (ms !== this.clock.ms) this.clock = { ms, iso: new Date(ms).toISOString() };
    const event = { seq, ts: this.clock.iso, session: this.session, type, data, turn };
    this.pending.push(`id: ${seq}\ndata: ${JSON.stringify(event)}\n\n`);
    if (this.fd !== undefined) {
      if (!this.committing) void this.commit(this.fd);
      return;
    }
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.broadcast();
    });
  }

  private broadcast(): void {
    const text = this.pending.join("");
    this.pending = [];
    for (const res of this.watchers) res.write(text);
  }

  /** Group commit: write + fdatasync what is pending, send it, repeat while more came meanwhile. */
  private async commit(fd: number): Promise<void> {
    this.committing = true;
    await groupCommit(fd, this, this.watchers);
    this.committing = false;
  }
}

/**
 * The durable relays' group commit: what `queue` holds is made durable in `fd` (writeDurable), then sent to
 * `watchers`; repeated while more was queued meanwhile.
 */
export async function groupCommit(
  fd: number,
  queue: { pending: string[] },
  watchers: Iterable<http.ServerResponse>,
): Promise<void> {
  // Events of this tick join the batch, as they do in Brain's log.
  await Promise.resolve();
  while (queue.pending.length > 0) {
    const text = queue.pending.join("");
    queue.pending = [];
    await writeDurable(fd, text);
    for (const res of watchers) res.write(text);
  }
}

/** The flag Brain's log opens its file with to make each write durable as it returns (0: none here). */
const SYNC_FLAG = writeFlags(nodeLogIO, 0);

/** A new file for a durable relay's batches, opened as Brain's log opens its own (writeFlags). */
export function openDurable(path: string): number {
  const { O_WRONLY, O_CREAT, O_TRUNC } = fs.constants;
  return fs.openSync(path, O_WRONLY | O_CREAT | O_TRUNC | SYNC_FLAG, 0o600);
}

/**
 * `text` written to `fd` (opened by openDurable) and durable, through libuv's pool, as Brain's log writes: one
 * O_DSYNC write where it uses one, else a write and an fdatasync.
 */
export async function writeDurable(fd: number, text: string): Promise<void> {
  await new Promise<void>((resolve, reject) => fs.write(fd, text, (err) => (err ? reject(err) : resolve())));
  if (SYNC_FLAG !== 0) return;
  await new Promise<void>((resolve, reject) => fs.fdatasync(fd, (err) => (err ? reject(err) : resolve())));
}
