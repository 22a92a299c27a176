// A stdio MCP server as a process group of its own. The SDK's StdioClientTransport spawns the server in Brain's
// group and takes it for dead only at its child's "close", which waits for every process holding its pipes: a
// server that dies leaving a helper behind (`sh -c 'helper & exec server'`, a server's browser or language
// server) was never seen to exit (each later call waited out call_timeout_ms, and no restart came), and a close
// signalled the server alone, so what it left ran on, orphaned, for the daemon's life. Here the server leads its
// own group: its exit is seen at "exit", and what it leaves behind goes with it, on a crash and on a close.
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { PassThrough } from "node:stream";
import { deserializeMessage, serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { ErrorCode, type JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import type { ExitKills } from "../../core/exit-kills.js";
import { FramingError, LineSplitter } from "../../protocol/ndjson.js";

export interface StdioServerParams {
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
  /** Brain's: kills the server's group as Brain exits (a second Ctrl-C's process.exit reaches no group of its). */
  exits?: ExitKills;
}

/** How long the server's output is still read after it exits: what it wrote last is read in far less. */
const EXIT_DRAIN_MS = 250;
/** A close's wait for the server to exit after its stdin ends, and again after SIGTERM (the SDK's own). */
const CLOSE_GRACE_MS = 2_000;
/**
 * The longest line read from a server: a line is kept until its newline comes, so a server that writes without
 * one (a crash dump, a binary) would grow the daemon until it fell over, with every tenant's sessions. As much as
 * Brain lets wait unread the other way (UNREAD_INPUT_LIMITS): room for any real result. (Not the SDK's ReadBuffer:
 * it copies what it holds at each chunk, so one long line cost the daemon's loop the square of its length.)
 */
export const MAX_LINE_BYTES = 64 * 1024 * 1024;
/** No process groups on Windows: there, the server alone is signalled. */
const GROUPS = process.platform !== "win32";

export class GroupStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  /** The server broke MAX_LINE_BYTES: what is read of it stops here, and it is to be stopped (`why` says why). */
  onoverlong?: (why: string) => void;
  /** The server's stderr, there before start so that nothing it says early is missed. */
  readonly stderr = new PassThrough();
  private child: ChildProcessWithoutNullStreams | undefined;
  private readonly lines = new LineSplitter((line) => this.take(line), MAX_LINE_BYTES);
  private drain: NodeJS.Timeout | undefined;
  private exited: Promise<void> | undefined;
  /** Its group was killed at "close": its id may name another group later, so it is signalled no more. */
  private done = false;
  /** Takes its group off Brain's exit kills, once it is killed (its id may name another group later). */
  private forget: (() => void) | undefined;
  /** Sends waiting for the server to take its input: one "drain" listener for them all, not one each. */
  private draining: (() => void)[] = [];
  /** A line went past MAX_LINE_BYTES: nothing more is read. */
  private overlong = false;

  constructor(private readonly params: StdioServerParams) {}

  start(): Promise<void> {
    if (this.child) throw new Error("this MCP stdio transport was started already");
    return new Promise((resolve, reject) => {
      const child = spawn(this.params.command, this.params.args, {
        env: this.params.env,
        cwd: this.params.cwd,
        stdio: ["pipe", "pipe", "pipe"],
        detached: GROUPS,
        windowsHide: true,
      });
      this.child = child;
      if (GROUPS && child.pid !== undefined) this.forget = this.params.exits?.add(child.pid);
      this.exited = new Promise((done) => child.once("exit", () => done()));
      child.on("error", (err) => {
        reject(err);
        this.onerror?.(err);
      });
      child.on("spawn", () => resolve());
      child.on("exit", () => this.afterExit(child));
      child.on("close", () => {
        clearTimeout(this.drain);
        // What the server left running that holds no pipe of its (a `sleep &` writing elsewhere) goes too.
        this.signal(child, "SIGKILL");
        this.done = true;
        this.forget?.();
        this.onclose?.();
      });
      child.stdin.on("error", (err) => this.onerror?.(err));
      child.stdout.on("error", (err) => this.onerror?.(err));
      child.stdout.on("data", (chunk: Buffer) => this.read(chunk));
      child.stderr.pipe(this.stderr);
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve, reject) => {
      const stdin = this.child?.stdin;
      if (!stdin || stdin.destroyed || stdin.writableEnded) return reject(new Error("Not connected"));
      if (stdin.write(serializeMessage(message))) return resolve();
      this.draining.push(resolve);
      if (this.draining.length > 1) return;
      stdin.once("drain", () => {
        const drained = this.draining;
        this.draining = [];
        for (const done of drained) done();
      });
    });
  }

  /** Ends the server's input, then SIGTERM to its group, then SIGKILL, each after a grace; its group goes last. */
  async close(): Promise<void> {
    const child = this.child;
    if (!child) return;
    const gone = this.exited!;
    const wait = () =>
      Promise.race([gone, new Promise<void>((done) => setTimeout(done, CLOSE_GRACE_MS).unref())]);
    child.stdin.end();
    if (running(child)) await wait();
    if (running(child)) {
      this.signal(child, "SIGTERM");
      await wait();
    }
    // The server, if it is still there, and anything it left running in its group.
    this.signal(child, "SIGKILL");
  }

  private read(chunk: Buffer): void {
    if (this.overlong) return;
    try {
      this.lines.push(chunk);
    } catch (err) {
      if (!(err instanceof FramingError)) throw err;
      this.overlong = true;
      this.onoverlong?.(`it wrote a line of more than ${MAX_LINE_BYTES} bytes with no end`);
    }
  }

  private take(line: string): void {
    const text = line.endsWith("\r") ? line.slice(0, -1) : line;
    let message: JSONRPCMessage;
    try {
      message = deserializeMessage(text);
    } catch (err) {
      // A line that is no message (a server's log on stdout) is passed over. One that answers a request of
      // Brain's, though not as JSON-RPC 2.0 has it (`jsonrpc` left out, neither result nor error), fails that
      // request now: passed over, its call would wait out call_timeout_ms and then blame the server's silence.
      const answered = malformedAnswer(text);
      if (answered) this.onmessage?.(answered);
      else this.onerror?.(err as Error);
      return;
    }
    this.onmessage?.(message);
  }

  /** Its pipes are closed after EXIT_DRAIN_MS unless "close" came first (nothing it left holds them). */
  private afterExit(child: ChildProcessWithoutNullStreams): void {
    this.drain = setTimeout(() => {
      // One more pass of the poll phase first: a busy loop may not have read what the server wrote last.
      setImmediate(() => {
        this.signal(child, "SIGKILL");
        // Something outside its group (setsid) may hold them still: Brain stops listening either way.
        child.stdout.destroy();
        child.stderr.destroy();
      });
    }, EXIT_DRAIN_MS);
  }

  private signal(child: ChildProcessWithoutNullStreams, signal: NodeJS.Signals): void {
    if (this.done) return;
    if (GROUPS && child.pid !== undefined) {
      try {
        process.kill(-child.pid, signal);
        return;
      } catch {
        // No process of its group is left.
        return;
      }
    }
    if (running(child)) child.kill(signal);
  }
}

/** The `data` of the error the client is told of an answer it could not read, for the request the answer names. */
export const MALFORMED_ANSWER = "brain: a malformed answer";

function malformedAnswer(line: string): JSONRPCMessage | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (!value || typeof value !== "object" || "method" in value) return undefined;
  const id = (value as { id?: unknown }).id;
  if (typeof id !== "number" && typeof id !== "string") return undefined;
  const answer = value as { jsonrpc?: unknown; result?: unknown; error?: unknown };
  // Said by field, never by value: a part of the line could be a part of a secret, which no redactor would know.
  const why =
    answer.jsonrpc !== "2.0"
      ? 'its "jsonrpc" is not "2.0"'
      : answer.result === undefined && answer.error === undefined
        ? 'it has neither a "result" nor an "error"'
        : `its ${answer.result === undefined ? '"error"' : '"result"'} is not one JSON-RPC 2.0 allows`;
  const message = `a message that is not JSON-RPC 2.0 (${why})`;
  return { jsonrpc: "2.0", id, error: { code: ErrorCode.InvalidRequest, message, data: MALFORMED_ANSWER } };
}

const running = (child: ChildProcessWithoutNullStreams) =>
  child.exitCode === null && child.signalCode === null;
