// The 100-session SSE baseline: a plain node:http SSE server fed by one runner child carrying many attachments
// (as Brain's shared runner host does), one stream per attachment at /events/<k>. Each runner line is split and
// JSON.parsed, formatted as Brain formats an event (the same fields), and written to that stream's watchers once per tick.
// No validation, no session, no durable log.
//
// "per-stream": the same hub with the one thing Brain's guarantee adds, as RawSseRelay's durable mode does: each
// stream has a file of its own (as each Brain session has its log), and a stream's batch is made durable in it as
// Brain's log makes its own (writeDurable: one O_DSYNC write on Linux) through libuv's thread pool before its
// watchers get it; what arrives meanwhile forms the stream's next batch. The
// floor of any host that keeps that promise for 100 sessions at once with a log per session, on this disk.
// "journal": the same promise kept by one file for all streams (a store-wide write-ahead journal, which Brain does
// not have): every stream's pending batch goes into one durable write, then each stream's watchers get theirs.
// What the per-session logs cost under this load, against a design that shares each sync among the sessions.
import { randomUUID } from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { encodeLine } from "../../src/protocol/ndjson.js";
import { withTimeout } from "./cleanup.js";
import { type Frame, groupCommit, openDurable, startRunner, writeDurable } from "./raw-sse.js";

/** How the hub makes a batch durable before its watchers get it: not at all, a file per stream, or one journal. */
export type HubDurability = "none" | "per-stream" | "journal";

interface Stream {
  attachment: string;
  seq: number;
  watchers: Set<http.ServerResponse>;
  pending: string[];
  /** Durable mode: the stream's file, and whether its group commit is running. */
  fd?: number;
  committing: boolean;
}

export class RawSseHub {
  private readonly server = http.createServer((req, res) => this.watch(req, res));
  private readonly streams: Stream[];
  private readonly byAttachment = new Map<string, Stream>();
  private readonly child;
  private readonly replies = new Map<string, () => void>();
  private readonly dirty = new Set<Stream>();
  private scheduled = false;
  private clock = { ms: -1, iso: "" };
  /** "journal": the one file, and whether its group commit is running. */
  private readonly journalFd: number | undefined;
  private journaling = false;

  constructor(runner: string, dir: string, count: number, durability: HubDurability = "none") {
    this.journalFd = durability === "journal" ? openDurable(`${dir}/journal.log`) : undefined;
    this.child = startRunner(runner, (frame) => this.line(frame));
    this.streams = Array.from({ length: count }, (_, k) => {
      const stream: Stream = {
        attachment: randomUUID(),
        seq: 0,
        watchers: new Set<http.ServerResponse>(),
        pending: [],
        committing: false,
        ...(durability === "per-stream" ? { fd: openDurable(`${dir}/events-${k}.log`) } : {}),
      };
      this.byAttachment.set(stream.attachment, stream);
      this.send(stream, "open", { session_id: stream.attachment, dir, config: {}, tools: [], provider: {} });
      return stream;
    });
  }

  async listen(): Promise<string[]> {
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    const port = (this.server.address() as AddressInfo).port;
    return this.streams.map((_, k) => `http://127.0.0.1:${port}/events/${k}`);
  }

  lastSeqs(): number[] {
    return this.streams.map((s) => s.seq);
  }

  /** Prompts every stream's attachment at once; resolves when every runner turn replied. */
  promptAll(text: string): Promise<void> {
    const all = this.streams.map(
      (stream) => new Promise<void>((resolve) => this.send(stream, "prompt", { text }, resolve)),
    );
    return withTimeout(
      Promise.all(all).then(() => {}),
      180_000,
      `raw hub prompt "${text}"`,
    );
  }

  async close(): Promise<void> {
    for (const stream of this.streams) {
      for (const res of stream.watchers) res.destroy();
      if (stream.fd !== undefined) fs.closeSync(stream.fd);
    }
    if (this.journalFd !== undefined) fs.closeSync(this.journalFd);
    this.child.stdin!.end();
    this.child.kill("SIGKILL");
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private send(stream: Stream, method: string, params: unknown, onReply?: () => void): void {
    const id = randomUUID();
    if (onReply) this.replies.set(id, onReply);
    const turn = method === "prompt" ? { turn: randomUUID() } : {};
    this.child.stdin!.write(encodeLine({ attachment: stream.attachment, ...turn, id, method, params }));
  }

  private watch(req: http.IncomingMessage, res: http.ServerResponse): void {
    const stream = this.streams[Number(req.url?.split("/").at(-1))];
    if (!stream) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    res.write("retry: 1000\n\n");
    stream.watchers.add(res);
    res.on("close", () => stream.watchers.delete(res));
  }

  private line(frame: Frame): void {
    const stream = frame.attachment ? this.byAttachment.get(frame.attachment) : undefined;
    if (!stream) return;
    if (frame.event === "assistant.delta") {
      this.emit(stream, "assistant.delta", frame.data, frame.turn);
    } else if (frame.id && ("result" in frame || "error" in frame)) {
      const reply = this.replies.get(frame.id);
      this.replies.delete(frame.id);
      if (reply) {
        this.emit(stream, "turn.settled", { status: "completed" }, frame.turn);
        reply();
      }
    }
  }

  /** Brain's event fields, in its order; like Brain, one timestamp string per millisecond. */
  private emit(stream: Stream, type: string, data: unknown, turn: string | undefined): void {
    const seq = ++stream.seq;
    const ms = Date.now();
    if (ms !== this.clock.ms) this.clock = { ms, iso: new Date(ms).toISOString() };
    const event = { seq, ts: this.clock.iso, session: stream.attachment, type, data, turn };
    stream.pending.push(`id: ${seq}\ndata: ${JSON.stringify(event)}\n\n`);
    if (stream.fd !== undefined) {
      if (!stream.committing) void this.commit(stream, stream.fd);
      return;
    }
    this.dirty.add(stream);
    if (this.journalFd !== undefined) {
      if (!this.journaling) void this.journal(this.journalFd);
      return;
    }
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      for (const s of this.dirty) {
        const text = s.pending.join("");
        s.pending = [];
        for (const res of s.watchers) res.write(text);
      }
      this.dirty.clear();
    });
  }

  /** Group commit of all streams: one durable write of every stream's pending batch, then each one sent. */
  private async journal(fd: number): Promise<void> {
    this.journaling = true;
    await Promise.resolve(); // events of this tick join the group, as in a log
    while (this.dirty.size > 0) {
      const group = [...this.dirty].map((stream) => ({ stream, text: stream.pending.join("") }));
      for (const { stream } of group) stream.pending = [];
      this.dirty.clear();
      await writeDurable(fd, group.map((g) => g.text).join(""));
      for (const { stream, text } of group) for (const res of stream.watchers) res.write(text);
    }
    this.journaling = false;
  }

  /** Group commit of one stream: make what is pending durable, send it, repeat while more came meanwhile. */
  private async commit(stream: Stream, fd: number): Promise<void> {
    stream.committing = true;
    await groupCommit(fd, stream, stream.watchers);
    stream.committing = false;
  }
}
