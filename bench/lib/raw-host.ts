// The baselines' host: the same runner child over the same kind of pipe, with nothing in between. It splits
// stdout with LineSplitter, JSON.parses each line, counts deltas, answers tool calls at once (echo), and
// correlates replies by id. No validation, no log, no tool dispatch.
//
// With `durableLog`, it is the durable floor instead: the tool.call lines of each stdout chunk are written to
// that file with one writeSync and made durable with one fdatasyncSync before they are answered (a group
// commit per read, the least a host that logs calls durably before dispatch must do). The results it sent are
// logged too, in the next read's write, ahead of its calls (and the last ones at the end of the prompt), under
// the same fdatasync: Brain must log every result as well, and this is how it does (a result rides with the next
// commit), so a floor that never wrote them did less than Brain must. With `resultSyncs`, the results are
// instead written and made durable (a second fdatasync) before they are sent: the floor of a host whose rule is
// that a result is durable before the runner sees it.
import { randomUUID } from "node:crypto";
import { once } from "node:events";
import { closeSync, fdatasyncSync, openSync, writeSync } from "node:fs";
import type { RemoteChild } from "../../src/harnesses/process/spawner.js";
import { encodeLine, LineSplitter } from "../../src/protocol/ndjson.js";
import { withTimeout } from "./cleanup.js";
import { spawnViaHost } from "./spawn.js";

interface RawFrame {
  attachment?: string;
  turn?: string;
  id?: string;
  event?: string;
  method?: string;
  data?: { text?: string };
  params?: { arguments?: { value?: unknown } };
  result?: unknown;
  error?: { message?: string };
}

export interface RawTurn {
  /** From sending the prompt to its reply. */
  seconds: number;
  deltas: number;
  toolCalls: number;
  message: string | undefined;
}

export class RawHost {
  readonly attachment = randomUUID();
  /** Started by the bench's spawn host (bench/lib/spawn.ts), in a process group of its own as Brain's runners. */
  private readonly started: Promise<RemoteChild>;
  private child!: RemoteChild;
  private exited: Promise<unknown> = Promise.resolve();
  private readonly pending = new Map<string, (frame: RawFrame) => void>();
  private nextId = 1;
  private deltas = 0;
  private toolCalls = 0;
  private message: string | undefined;
  private gone: string | undefined;
  private readonly logFd: number | undefined;
  private readonly resultSyncs: boolean;
  /** Tool calls read in the current chunk: [the line as read, the reply]. */
  private calls: [string, string][] = [];
  /** Results sent and not yet logged (durable floor without resultSyncs): written with the next read's calls. */
  private unlogged = "";

  constructor(runnerPath: string, options: { durableLog?: string; resultSyncs?: boolean } = {}) {
    if (options.durableLog) this.logFd = openSync(options.durableLog, "w");
    this.resultSyncs = options.resultSyncs === true;
    this.started = spawnViaHost(process.execPath, [runnerPath]);
  }

  private adopt(child: RemoteChild): void {
    this.child = child;
    this.exited = once(this.child, "close").then(([code, signal]) => {
      this.gone = `runner exited (${signal ?? `code ${code}`})`;
      for (const reply of [...this.pending.values()]) reply({ error: { message: this.gone } });
    });
    const splitter = new LineSplitter((line) => this.onLine(line));
    this.child.stdout!.on("data", (chunk: Buffer) => {
      splitter.push(chunk);
      if (this.calls.length > 0) this.answerCalls();
    });
    this.child.stdin!.on("error", () => {});
  }

  private answerCalls(): void {
    const calls = this.calls;
    this.calls = [];
    if (this.logFd !== undefined) {
      const replies = calls.map(([, reply]) => reply).join("");
      this.logDurably(this.unlogged + calls.map(([line]) => `${line}\n`).join(""));
      if (this.resultSyncs) this.logDurably(replies);
      this.unlogged = this.resultSyncs ? "" : replies;
    }
    for (const [, reply] of calls) this.child.stdin!.write(reply);
  }

  private logDurably(text: string): void {
    const buf = Buffer.from(text);
    for (let done = 0; done < buf.length; ) done += writeSync(this.logFd!, buf, done, buf.length - done);
    fdatasyncSync(this.logFd!);
  }

  private onLine(line: string): void {
    const frame = JSON.parse(line) as RawFrame;
    if (frame.event !== undefined) {
      if (frame.event === "assistant.delta") this.deltas++;
      else if (frame.event === "assistant.message") this.message = frame.data?.text;
      return;
    }
    if (frame.method === "tool.call") {
      this.toolCalls++;
      const text = String(frame.params?.arguments?.value);
      const result = { content: [{ type: "text", text }], is_error: false };
      const reply = encodeLine({ attachment: frame.attachment, turn: frame.turn, id: frame.id, result });
      this.calls.push([line, reply]); // answered at the end of this chunk (after the fdatasync if durable)
      return;
    }
    if (frame.id !== undefined) this.pending.get(frame.id)?.(frame);
  }

  private request(method: string, params: unknown, turn?: string): Promise<RawFrame> {
    if (this.gone) return Promise.reject(new Error(`raw host: "${method}": ${this.gone}`));
    const id = String(this.nextId++);
    const reply = new Promise<RawFrame>((resolve) => {
      this.pending.set(id, (frame) => {
        this.pending.delete(id);
        resolve(frame);
      });
    });
    this.child.stdin!.write(
      encodeLine({ attachment: this.attachment, ...(turn ? { turn } : {}), id, method, params }),
    );
    return withTimeout(reply, 60_000, `raw host: "${method}"`).then((frame) => {
      if (frame.error) throw new Error(`raw host: "${method}" failed: ${frame.error.message}`);
      return frame;
    });
  }

  async open(dir: string): Promise<void> {
    this.adopt(await this.started);
    const params = { session_id: "raw", dir, config: {}, tools: [], provider: {} };
    await this.request("open", params);
  }

  async prompt(text: string): Promise<RawTurn> {
    this.deltas = 0;
    this.toolCalls = 0;
    this.message = undefined;
    const t0 = process.hrtime.bigint();
    await this.request("prompt", { text }, randomUUID());
    // As Brain's turn.settled commit does for its last results (the runner's timing has ended by then).
    if (this.unlogged !== "") this.logDurably(this.unlogged);
    this.unlogged = "";
    const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
    return { seconds, deltas: this.deltas, toolCalls: this.toolCalls, message: this.message };
  }

  /** Closes stdin (the runner exits on end of input); SIGKILL if it has not exited within 5 s. */
  async close(): Promise<void> {
    if (!this.child) this.adopt(await this.started);
    this.child.stdin!.end();
    const timer = setTimeout(() => this.child.kill("SIGKILL"), 5_000);
    await this.exited;
    clearTimeout(timer);
    if (this.logFd !== undefined) closeSync(this.logFd);
  }
}
