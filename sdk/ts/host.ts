// The runner side of Brain's stdio protocol (docs/protocol.md#runner-stdio-protocol): reads Brain's frames from stdin (split on "\n" only, 4 MiB cap,
// strict decoding), dispatches each request to the attachment it names, and writes replies that echo the
// request's attachment and turn. Requests are handled concurrently: a prompt runs while steer, interrupt and
// tool replies for it keep arriving.
//
// zod is not loaded to start: well-formed frames and results pass the checks of fast-brain-frames.ts, and the
// zod schemas (the reference, which words every error) are imported only when something fails those checks.
import type { Readable } from "node:stream";
import { decodeBrainFrameFast, isRequestResult } from "../../src/protocol/fast-brain-frames.js";
import { encodeLine, LineSplitter, MAX_FRAME, preview } from "../../src/protocol/ndjson.js";
import type {
  BrainToRunnerFrame,
  RunnerError,
  RunnerRequest,
  ToolReply,
  ToolResult,
} from "../../src/protocol/runner.js";
import { guardConsole, protocolStdout } from "./console-guard.js";
import { brainError, RunnerFailure, resultProblem, toWireError } from "./errors.js";
import { catchTurnLeaks, runPrompt, type TurnHost, TurnState } from "./turn.js";
import type { Attachment, Runner } from "./types.js";

/** Where frames are written: process.stdout or any stream like it (`once`/`off` let a writer wait for "drain"). */
export interface Output {
  write(chunk: string): unknown;
  once?(event: "drain" | "close", listener: () => void): unknown;
  off?(event: "drain" | "close", listener: () => void): unknown;
}

export interface ServeOptions {
  /** Where Brain's frames come from; process.stdin by default. */
  input?: Readable;
  /** Where frames go; process.stdout by default. Nothing else may ever be written there. */
  output?: Output;
  /** Diagnostics; stderr by default (Brain keeps its tail for error messages, never logs it as events). */
  log?: (message: string) => void;
  /** Called once input has ended (0) or its framing broke (1); process.exit by default. */
  exit?: (code: number) => void;
  /**
   * Sends console output to the log, and the runner's own process.stdout.write to stderr, so no library can corrupt
   * the frame stream (stdout-guard.ts says what cannot be reached). On by default when the output is process.stdout.
   */
  guardStdout?: boolean;
}

export interface RunnerHost {
  /** Resolves once input has ended and every attachment has been released. */
  readonly closed: Promise<void>;
}

interface OpenAttachment {
  handlers: Attachment;
  turn?: TurnState;
  detached: boolean;
}

/** How long the detach handlers may take when stdin ends. */
const DETACH_GRACE_MS = 2_000;

/** A reply that must not be sent: its attachment was detached meanwhile. */
const SILENT = Symbol("silent");

/** Starts serving `runner` over stdio (or the given streams). */
export function serve(runner: Runner, options: ServeOptions = {}): RunnerHost {
  return new Host(runner, options);
}

class Host implements RunnerHost, TurnHost {
  readonly closed: Promise<void>;
  private readonly attachments = new Map<string, OpenAttachment>();
  /** Opens still running: a request that follows one waits for it (frames are read faster than opens run). */
  private readonly opening = new Map<string, Promise<unknown>>();
  private readonly toolWaits = new Map<
    string,
    { turn: TurnState; settle: (r: ToolResult | Error) => void }
  >();
  /** Tool calls whose replies no longer matter (interrupted, or the turn ended): dropped without a word. */
  private readonly abandoned = new Set<string>();
  private output: Output;
  /** Settles when the output, full at the last write, has drained (undefined while it has room). */
  private room: Promise<void> | undefined;
  private readonly exit: (code: number) => void;
  readonly log: (message: string) => void;
  private frameIds = 0;
  /** Lines held, in order, while the reference decoder loads for one the fast check did not accept. */
  private backlog: string[] | undefined;
  /** Settles once the backlog has been decoded and dispatched. */
  private drained: Promise<void> = Promise.resolve();
  private shuttingDown = false;
  private resolveClosed: () => void = () => {};

  constructor(
    private readonly runner: Runner,
    options: ServeOptions,
  ) {
    const input = options.input ?? process.stdin;
    this.output = options.output ?? process.stdout;
    this.log = options.log ?? ((message) => process.stderr.write(`${message}\n`));
    this.exit = options.exit ?? ((code) => process.exit(code));
    this.closed = new Promise((resolve) => {
      this.resolveClosed = resolve;
    });
    catchTurnLeaks(this.log);
    if (options.guardStdout ?? this.output === process.stdout) {
      guardConsole(this.log);
      if (this.output === process.stdout) this.output = protocolStdout();
    }

    const splitter = new LineSplitter((line) => this.onLine(line));
    input.on("data", (chunk: Buffer | string) => {
      if (this.shuttingDown) return;
      try {
        splitter.push(typeof chunk === "string" ? Buffer.from(chunk) : chunk);
      } catch (err) {
        // The rest of the stream cannot be split reliably any more: stop, and Brain reports the exit.
        this.log(`runner: broken framing on stdin: ${(err as Error).message}`);
        void this.shutdown(1);
      }
    });
    // A broken stdin (the host died mid-write) ends the runner as an ended one does, not as an uncaught error.
    input.on("error", (err) => {
      this.log(`runner: stdin failed: ${err.message}`);
      void this.shutdown(1);
    });
    input.on("end", () => {
      try {
        splitter.end();
      } catch (err) {
        this.log(`runner: ${(err as Error).message}`);
      }
      void this.shutdown(0);
    });
  }

  send(frame: unknown): void {
    const line = encodeLine(frame);
    // A UTF-16 unit is at most 3 bytes of UTF-8: only long lines need counting.
    if (line.length * 3 > MAX_FRAME && Buffer.byteLength(line) > MAX_FRAME + 1) {
      throw new RunnerFailure(
        "brain_error",
        `a frame of ${Buffer.byteLength(line)} bytes passes the 4 MiB cap`,
      );
    }
    // A stream's write returns false once its buffer passes the high-water mark: the line is still queued, and
    // a handler that awaits room() stops producing until the reader (Brain) has caught up.
    if (this.output.write(line) === false && !this.room && typeof this.output.once === "function") {
      const output = this.output;
      this.room = new Promise((resolve) => {
        const settle = () => {
          output.off?.("drain", settle);
          output.off?.("close", settle);
          this.room = undefined;
          resolve();
        };
        output.once?.("drain", settle);
        // A closed output never drains: the runner is ending, nothing is waiting for what it writes.
        output.once?.("close", settle);
      });
    }
  }

  roomToWrite(): Promise<void> {
    return this.room ?? Promise.resolve();
  }

  nextFrameId(): string {
    return `t${++this.frameIds}`;
  }

  awaitToolReply(frameId: string, turn: TurnState, settle: (result: ToolResult | Error) => void): void {
    this.toolWaits.set(frameId, { turn, settle });
  }

  abandonToolReply(frameId: string): void {
    if (this.toolWaits.delete(frameId)) this.abandoned.add(frameId);
  }

  private onLine(line: string): void {
    if (this.backlog) {
      this.backlog.push(line);
      return;
    }
    const frame = decodeBrainFrameFast(line);
    if (frame) return this.onFrame(frame);
    // Frames are handled in the order they came: those that follow wait for the reference decoder too.
    this.backlog = [line];
    this.drained = this.drainBacklog();
  }

  private async drainBacklog(): Promise<void> {
    let decode: (line: string) => BrainToRunnerFrame;
    try {
      ({ decodeBrainFrame: decode } = await import("../../src/protocol/frames.js"));
    } catch (err) {
      this.log(`runner: cannot load the frame schemas: ${(err as Error).message}`);
      this.backlog = undefined;
      void this.shutdown(1);
      return;
    }
    const lines = this.backlog ?? [];
    this.backlog = undefined;
    for (const line of lines) {
      let frame: BrainToRunnerFrame;
      try {
        frame = decodeBrainFrameFast(line) ?? decode(line);
      } catch (err) {
        this.onBadFrame(line, err as Error);
        continue;
      }
      this.onFrame(frame);
    }
  }

  private onFrame(frame: BrainToRunnerFrame): void {
    if ("method" in frame) void this.onRequest(frame);
    else this.onToolReply(frame);
  }

  private async onRequest(frame: RunnerRequest): Promise<void> {
    const turn = "turn" in frame ? { turn: frame.turn } : {};
    const head = { attachment: frame.attachment, ...turn, id: frame.id };
    let out: { result: unknown } | { error: RunnerError };
    try {
      const result = await this.dispatch(frame);
      if (result === SILENT) return;
      const problem = isRequestResult(frame.method, result)
        ? undefined
        : await resultProblem(frame.method, result);
      out = problem ? { error: brainError(`invalid ${frame.method} result: ${problem}`) } : { result };
    } catch (err) {
      out = { error: toWireError(err, frame.method) };
    }
    try {
      this.send({ ...head, ...out });
    } catch (err) {
      this.send({ ...head, error: toWireError(err, frame.method) });
    }
  }

  private async dispatch(frame: RunnerRequest): Promise<unknown> {
    const { attachment } = frame;
    if (frame.method === "open") return this.open(attachment, frame);
    await this.opening.get(attachment)?.catch(() => {});
    const open = this.attachments.get(attachment);
    if (!open || open.detached)
      throw new RunnerFailure("brain_error", `attachment "${attachment}" is not open`);
    switch (frame.method) {
      case "prompt":
        return this.prompt(open, attachment, frame.turn, frame.params.text);
      case "steer": {
        const running = open.turn;
        if (running?.id !== frame.turn)
          throw new RunnerFailure("brain_error", `turn ${frame.turn} is not running`);
        if (open.handlers.steer)
          await running.within(() => open.handlers.steer?.(frame.params.text, running));
        else running.queueSteering(frame.params.text);
        return {};
      }
      case "interrupt": {
        // Idempotent: an interrupt for a turn that already settled has nothing left to stop.
        const running = open.turn;
        if (running?.id === frame.turn && !running.signal.aborted) {
          running.abort();
          await running.within(() => open.handlers.interrupt?.(running));
        }
        return {};
      }
      case "checkpoint":
        if (open.turn) throw new RunnerFailure("brain_error", `turn ${open.turn.id} is still running`);
        return open.handlers.checkpoint();
      case "detach":
        open.detached = true;
        // Nothing more of its turn is written: Brain has let the attachment go and would refuse its frames.
        open.turn?.abort();
        open.turn?.end();
        try {
          await open.handlers.detach?.();
        } finally {
          this.attachments.delete(attachment);
        }
        return {};
    }
  }

  private async open(attachment: string, frame: Extract<RunnerRequest, { method: "open" }>) {
    if (this.attachments.has(attachment) || this.opening.has(attachment)) {
      throw new RunnerFailure("brain_error", `attachment "${attachment}" is already open`);
    }
    const opened = (async () => {
      const handlers = await this.runner.open(frame.params, { id: attachment });
      this.attachments.set(attachment, { handlers, detached: false });
      return handlers.metadata ?? {};
    })();
    this.opening.set(attachment, opened);
    try {
      return await opened;
    } finally {
      this.opening.delete(attachment);
    }
  }

  private async prompt(open: OpenAttachment, attachment: string, id: string, text: string) {
    if (open.turn) throw new RunnerFailure("brain_error", `turn ${open.turn.id} is still running`);
    const turn = new TurnState(this, attachment, id);
    open.turn = turn;
    let result: { interrupted?: true };
    try {
      result = await runPrompt(open.handlers, text, turn);
    } catch (err) {
      if (open.detached) return SILENT;
      throw err;
    } finally {
      turn.end();
      open.turn = undefined;
    }
    return open.detached ? SILENT : result;
  }

  private onToolReply(frame: ToolReply): void {
    const wait = this.toolWaits.get(frame.id);
    if (!wait) {
      if (!this.abandoned.delete(frame.id))
        this.log(`runner: reply for unknown tool call "${frame.id}" ignored`);
      return;
    }
    this.toolWaits.delete(frame.id);
    if (frame.attachment !== wait.turn.attachment || frame.turn !== wait.turn.id) {
      const what = `attachment "${frame.attachment}", turn "${frame.turn}"`;
      wait.settle(new RunnerFailure("brain_error", `the reply to tool call "${frame.id}" named ${what}`));
      return;
    }
    wait.settle(frame.result);
  }

  /** A frame that does not decode: answer it if it is recognisably a request or a tool reply, else log it. */
  private onBadFrame(line: string, err: Error): void {
    let obj: Record<string, unknown> | undefined;
    try {
      const value: unknown = JSON.parse(line);
      if (value && typeof value === "object" && !Array.isArray(value)) obj = value as Record<string, unknown>;
    } catch {
      // not JSON at all: only the log can say so
    }
    const { attachment, id, turn } = obj ?? {};
    const message = `bad frame from Brain: ${err.message}`;
    if (typeof id === "string" && this.toolWaits.has(id)) {
      const wait = this.toolWaits.get(id)!;
      this.toolWaits.delete(id);
      wait.settle(new RunnerFailure("brain_error", message));
      return;
    }
    if (obj && "method" in obj && typeof id === "string" && typeof attachment === "string") {
      const head = { attachment, ...(typeof turn === "string" ? { turn } : {}), id };
      this.send({ ...head, error: brainError(message) });
      return;
    }
    this.log(`runner: ${message} (${preview(line)})`);
  }

  private async shutdown(code: number): Promise<void> {
    if (this.shuttingDown) return;
    this.shuttingDown = true;
    // Frames that came before the end still get their turn (a line the reference decoder is loading for).
    await this.drained;
    const release = async (attachment: OpenAttachment) => {
      attachment.detached = true;
      attachment.turn?.abort();
      attachment.turn?.end();
      await attachment.handlers.detach?.();
    };
    const open = [...this.attachments.values()];
    this.attachments.clear();
    // Aborted at once, not after the opens below: Brain is gone, nothing a turn does can reach it.
    const released = open.map(release);
    // An open still running when Brain went away is released as soon as it completes (within the grace below),
    // so what its runner acquired for it (a child process, a connection) is not left behind.
    const opens = [...this.opening].map(async ([id, opened]) => {
      await opened.catch(() => {});
      const attachment = this.attachments.get(id);
      if (!attachment) return;
      this.attachments.delete(id);
      await release(attachment);
    });
    // Detach handlers get a moment to release what they hold; a hung one does not keep the process alive.
    const detached = Promise.allSettled([...released, ...opens]);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([detached, new Promise((resolve) => (timer = setTimeout(resolve, DETACH_GRACE_MS)))]);
    clearTimeout(timer);
    this.resolveClosed();
    this.exit(code);
  }
}
