// One runner child process: spawns it with a minimal environment, splits its stdout into frames, keeps a bounded
// tail of its stderr for error messages (stderr never reaches the event log), and routes each frame to the
// attachment it names. Broken framing or an exit is fatal to every attachment; a frame for an unknown
// attachment is only a warning (see astray), and one for an attachment detached lately is dropped.
import type { Backlog } from "../../core/backlog.js";
import { tailOf } from "../../core/redact.js";
import { onText } from "../../core/stream-text.js";
import { RunnerFrameReader } from "../../protocol/frame-reader.js";
import { ProtocolError } from "../../protocol/frames.js";
import { clip } from "../../protocol/jsonrpc.js";
import { encodeFrame, FramingError, MAX_FRAME } from "../../protocol/ndjson.js";
import type { BrainToRunnerFrame, RunnerToBrainFrame } from "../../protocol/runner.js";
import { UNREAD_INPUT_LIMITS } from "../../protocol/unread-input.js";
import { ReadGate, sharedReadAhead, type WaitEnd } from "../read-gate.js";
import { MAX_TOOL_CALLS_IN_FLIGHT } from "./call-places.js";
import { PendingChild } from "./pending-child.js";
import type { RunnerChild } from "./spawner.js";
import { type RunnerLaunch, spawnRunner } from "./started-runner.js";

const STDERR_TAIL_BYTES = 8 * 1024;
/** How long a runner whose stdout ended may take to exit before it is taken for one that can never answer. */
const STDOUT_ENDED_GRACE_MS = 1000;
/** How many detached attachments a process remembers, to drop their late frames without a word. */
const DETACHED_REMEMBERED = 1024;
/** The bytes of a delta's frame besides its text and ids (`{"attachment":…,"turn":…,"event":…,"data":{"text":…}}`). */
const DELTA_FRAME_BYTES = 64;
/**
 * How much Brain may have written to a runner that it has not read: the bound an MCP peer has, past room for the
 * answers to a whole set of calls in flight, each as large as a frame may be (a runner reading them as they come
 * may still be behind by that much). A runner that calls tools without reading the answers had every answer pile
 * up in Brain's memory.
 */
const MAX_UNREAD_INPUT = UNREAD_INPUT_LIMITS.bytes + MAX_TOOL_CALLS_IN_FLIGHT * MAX_FRAME;

export interface RunnerCommand extends RunnerLaunch {
  /** The harness name, for messages. */
  name: string;
  /**
   * One runner process for every session of this harness (attachments), instead of one per session: a session
   * whose log is behind then has its frames held back, within a bound, rather than stall the others (ReadGate).
   */
  shared?: boolean;
  /** Bytes written to the runner and not read by it past which it is stopped as broken (MAX_UNREAD_INPUT). */
  maxUnreadInput?: number;
  /** Tool calls of one attachment that may wait for a place past those in flight (MAX_TOOL_CALLS_WAITING). */
  maxToolCallsWaiting?: number;
  /** When shared: what all its sessions behind may hold back together (HOST_READ_AHEAD_BYTES, see ReadGate). */
  hostReadAheadBytes?: number;
}

export interface AttachmentSink {
  onFrame(frame: RunnerToBrainFrame): void;
  /**
   * A delta read straight from the bytes (RunnerFrameReader): the frame `{attachment, turn, event:
   * "assistant.delta", data}`, without the object, as most of a streaming turn's frames are.
   */
  onDelta(turn: string, data: { readonly text: string }): void;
  onWarning(message: string): void;
  /** The turn running on this attachment, if one is. */
  runningTurn(): string | undefined;
  /** The process is gone or its stream is broken: fail everything in flight. */
  onFatal(message: string): void;
  /** How far the session's log is behind: stdout is not read while it is full (see ReadGate). */
  readonly backlog?: Backlog | undefined;
}

export class RunnerProcess {
  /** Frames sent and signals given while a spawn host starts it (see Spawner) are held there until it runs. */
  private readonly pending: PendingChild;
  private held = true;
  private readonly sinks = new Map<string, AttachmentSink>();
  /**
   * Attachments detached lately, oldest first. A runner may still be writing a detached attachment's turn when
   * its detach is answered; those frames are nobody's business, least of all the other sessions of a shared host.
   */
  private readonly detached = new Set<string>();
  private stderrTail = "";
  /** How many attachments it has served: past one, what it writes may be any of their sessions' (see quotable). */
  private served = 0;
  private readonly reader = new RunnerFrameReader(
    (line) => this.onLine(line),
    (attachment, turn, data) => this.routeDelta(attachment, turn, data),
  );
  private fatal: string | undefined;
  /**
   * Stdout is paused while any attachment's session log is behind; a shared host's is read on for the others,
   * the frames of those behind held back up to a session's and the host's read-ahead, and paused only past
   * either (see ReadGate).
   */
  private readonly gate: ReadGate;
  /** The backlogs of the attachments whose session log tells one (see AttachmentSink). */
  private readonly backlogs = new Map<string, Backlog>();
  /** Checks every attachment's backlog, once per chunk read, after the chunk's events reached their logs. */
  private readonly checkBacklogs = () => {
    for (const [id, backlog] of this.backlogs) this.gate.check(id, backlog);
  };
  /** Tool calls read from the runner and not answered yet, over all its attachments (see send). */
  openCalls = 0;
  /** Frames are being held for one write at the end of this tick (see send). */
  private corked = false;
  /** Resolves once the process is gone and its output drained (or it never started). */
  readonly exited: Promise<void>;

  /**
   * `child`: one already spawned from this spec's launch (a StartedRunner's), or one a spawn host is starting;
   * none: spawned here.
   */
  constructor(
    readonly spec: RunnerCommand,
    child?: RunnerChild | Promise<RunnerChild>,
  ) {
    const readAhead = spec.shared ? sharedReadAhead(spec.hostReadAheadBytes) : undefined;
    this.gate = new ReadGate(() => this.child?.stdout, readAhead);
    let exited: () => void = () => {};
    this.exited = new Promise((resolve) => {
      exited = resolve;
    });
    const couldNot = (err: Error) => {
      this.fail(`could not start "${spec.command}": ${err.message}`);
      exited();
    };
    this.pending = new PendingChild({
      group: true,
      onStart: (started) => this.listen(started, exited),
      onError: couldNot,
    });
    this.pending.start(child ?? spawnRunner(spec));
  }

  private get child(): RunnerChild | undefined {
    return this.pending.child;
  }

  private listen(child: RunnerChild, exited: () => void): void {
    child.stdout.on("data", (chunk: Buffer) => {
      if (this.fatal) return;
      this.gate.read();
      try {
        this.reader.push(chunk);
      } catch (err) {
        this.fail(`broken framing on stdout: ${(err as Error).message}`);
      }
      // A session appends what its harness emitted in a microtask queued with the chunk's first event: this one
      // comes after it, so the backlog counts the chunk.
      if (this.backlogs.size > 0) queueMicrotask(this.checkBacklogs);
    });
    let stdoutEnded: NodeJS.Timeout | undefined;
    /** Why stdout ended in the middle of a frame: a runner that died mid-write, whose exit (below) says why. */
    let torn: string | undefined;
    child.stdout.on("end", () => {
      try {
        this.reader.end();
      } catch (err) {
        if (err instanceof FramingError) torn = err.message;
      }
      // A runner that closed its stdout and lives on can never answer: its turn would wait forever. An exiting
      // one closes within the grace, and its exit code says more.
      stdoutEnded = setTimeout(() => {
        if (child.exitCode === null && child.signalCode === null)
          this.fail(
            torn ? `broken framing on stdout: ${torn}` : `runner "${this.spec.name}" closed its stdout`,
          );
      }, STDOUT_ENDED_GRACE_MS);
      stdoutEnded.unref();
    });
    child.on("exit", () => this.gate.stop());
    onText(child.stderr, (text) => (this.stderrTail = tailOf(this.stderrTail + text, STDERR_TAIL_BYTES)));
    // "close", not "exit": by then stdout and stderr are drained, so no frame or stderr line is lost. It comes
    // even when something the runner started still holds them, and whatever it started in its group goes with it
    // then (PendingChild).
    child.on("close", (code, signal) => {
      clearTimeout(stdoutEnded);
      const how = signal ? `was killed by ${signal}` : code === null ? "exited" : `exited with code ${code}`;
      this.fail(`runner "${this.spec.name}" ${how}${torn ? `; its stdout ${torn}` : ""}`);
      exited();
    });
    this.hold(this.held);
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  get alive(): boolean {
    return this.fatal === undefined;
  }

  /** The bytes of frames held back now for its sessions whose log is behind (a shared host's: see ReadGate). */
  get heldBackBytes(): number {
    return this.gate.heldBackBytes;
  }

  /** Calls `fire` after `ms` of reading its stdout: a wait for its answer (see ReadGate.afterRead). */
  afterRead(ms: number, fire: (end: WaitEnd) => void): () => void {
    return this.gate.afterRead(ms, fire);
  }

  get attachments(): number {
    return this.sinks.size;
  }

  attach(id: string, sink: AttachmentSink): void {
    this.sinks.set(id, sink);
    if (sink.backlog) this.backlogs.set(id, sink.backlog);
    this.served++;
    if (this.fatal) sink.onFatal(this.describe(this.fatal));
  }

  detach(id: string): void {
    if (!this.sinks.delete(id)) return;
    this.backlogs.delete(id);
    this.gate.forget(id);
    this.detached.add(id);
    if (this.detached.size > DETACHED_REMEMBERED) this.detached.delete(this.detached.values().next().value!);
  }

  /**
   * Writes one frame. A frame over the cap throws FramingError and is not written: the runner would refuse the
   * line and die, taking every attachment of a shared host with it, so only the sender's request fails.
   */
  send(frame: BrainToRunnerFrame): void {
    const bytes = encodeFrame(frame);
    if (this.fatal) return;
    const unread = this.child?.stdin.writableLength ?? 0;
    const limit = this.spec.maxUnreadInput ?? MAX_UNREAD_INPUT;
    if (unread + bytes.length > limit) {
      // Its attachments' requests fail with this, rather than wait for answers it will never read either.
      return this.fail(
        `runner "${this.spec.name}" did not read its stdin: ${unread} bytes from Brain were waiting unread (the limit is ${limit} bytes), so it was stopped`,
      );
    }
    // While other tool calls are open, the answers that one commit let through are written in the same tick: held
    // (cork) until the tick ends, they leave in one writev(2) instead of one write(2) each, and the runner wakes
    // once for them (a write to the pipe costs tens of µs, as much as the rest of a call's handling). The answer
    // to the only open call goes at once: nothing else would share its write.
    if (this.child && !this.corked && this.openCalls > 1) {
      this.corked = true;
      this.child.stdin.cork();
      process.nextTick(this.uncork);
    }
    this.pending.write(bytes);
  }

  private readonly uncork = () => {
    this.corked = false;
    this.child?.stdin.uncork();
  };

  /**
   * The last few KiB the runner wrote on stderr, for error messages; empty once it has served more than one
   * session, as a shared host's stderr may hold any of its sessions' text and no session may read another's.
   */
  stderr(): string {
    return this.quotable ? this.stderrTail.trim() : "";
  }

  /** Whether what the runner wrote may be quoted to its sessions: only while it has served just one. */
  private get quotable(): boolean {
    return this.served <= 1;
  }

  /** Ends the process: close stdin, then SIGTERM, then SIGKILL, each after a grace period. */
  async stop(graceMs = 2000): Promise<void> {
    if (!this.pending.running) return;
    // One still being started was never opened by anyone: nothing to let it finish. It gets the SIGKILL after the
    // grace all the same (held until it is there): one that ignored SIGTERM was otherwise waited for forever.
    const started = this.child !== undefined;
    this.pending.end();
    if (!started) this.signalGroup("SIGTERM");
    const escalate = started ? setTimeout(() => this.signalGroup("SIGTERM"), graceMs) : undefined;
    const kill = setTimeout(() => this.signalGroup("SIGKILL"), graceMs * 2);
    await this.exited;
    clearTimeout(escalate);
    clearTimeout(kill);
  }

  kill(): void {
    this.signalGroup("SIGKILL");
  }

  /** Kills the whole group at once and waits for the exit: for a process that holds no session's state. */
  async destroy(): Promise<void> {
    // An unreferenced (spare) process would let Node exit before its exit is seen, mid-await (exit code 13).
    this.hold(true);
    if (this.pending.running) this.signalGroup("SIGKILL");
    await this.exited;
  }

  /** Whether this process keeps Brain's event loop alive (an idle spare does not; a process in use does). */
  hold(held: boolean): void {
    this.held = held;
    if (!this.child) return; // applied once it is started
    const streams = [this.child.stdin, this.child.stdout, this.child.stderr] as unknown as {
      ref?(): void;
      unref?(): void;
    }[];
    if (held) {
      this.child.ref();
      for (const stream of streams) stream.ref?.();
    } else {
      this.child.unref();
      for (const stream of streams) stream.unref?.();
    }
  }

  /** Signals the runner's whole process group (the runner and everything it started). */
  private signalGroup(signal: NodeJS.Signals): void {
    this.pending.signal(signal);
  }

  private onLine(line: string): void {
    if (this.fatal) return;
    let frame: RunnerToBrainFrame;
    try {
      frame = this.reader.decode(line);
    } catch (err) {
      if (err instanceof ProtocolError) {
        // The bad line quoted (ProtocolError's preview) goes only to the session it names, or to the only one.
        const own = `protocol violation on stdout: ${err.message}`;
        if (this.quotable) return this.fail(own);
        return this.fail("protocol violation on stdout, in a frame not quoted here", attachmentOf(line), own);
      }
      throw err;
    }
    this.route(frame, line.length);
  }

  /** `bytes`: about how many it was read as, counted while it is held back (see ReadGate.holdBack). */
  private route(frame: RunnerToBrainFrame, bytes = 0): void {
    if (this.fatal) return;
    const id = frame.attachment;
    const sink = this.sinks.get(id);
    if (sink && this.gate.holding(id))
      return this.gate.holdBack(id, bytes, () => this.sinkOf(id)?.onFrame(frame));
    if (sink) return sink.onFrame(frame);
    if (this.detached.has(frame.attachment)) return;
    this.astray(frame);
  }

  /**
   * A frame naming an attachment the runner does not serve. On a shared host what it holds may be any session's:
   * it is quoted only to the session whose running turn it names; failing that, the sessions with a turn running
   * (whose frame it may have been) hear, unquoted, that one went astray, and idle sessions are not told.
   */
  private astray(frame: RunnerToBrainFrame): void {
    const quoted = `frame for unknown attachment "${clip(frame.attachment)}" ignored`;
    const sinks = [...this.sinks.values()];
    if (this.quotable) return sinks[0]?.onWarning(quoted);
    const turn = "turn" in frame ? frame.turn : undefined;
    const owner = turn === undefined ? undefined : sinks.find((sink) => sink.runningTurn() === turn);
    if (owner) return owner.onWarning(quoted);
    const unquoted = `a frame for an attachment this shared runner does not serve was ignored (not quoted here: it may be another session's)`;
    for (const sink of sinks) if (sink.runningTurn() !== undefined) sink.onWarning(unquoted);
  }

  private routeDelta(attachment: string, turn: string, data: { readonly text: string }): void {
    if (this.fatal) return;
    const sink = this.sinks.get(attachment);
    if (sink && this.gate.holding(attachment)) {
      const bytes = data.text.length + attachment.length + turn.length + DELTA_FRAME_BYTES;
      return this.gate.holdBack(attachment, bytes, () => this.sinkOf(attachment)?.onDelta(turn, data));
    }
    if (sink) return sink.onDelta(turn, data);
    this.route({ attachment, turn, event: "assistant.delta", data } as RunnerToBrainFrame);
  }

  /** The sink of attachment `id` while it is attached and the process not failed: where a frame held back goes. */
  private sinkOf(id: string): AttachmentSink | undefined {
    return this.fatal === undefined ? this.sinks.get(id) : undefined;
  }

  /** `own`: what attachment `about` is told instead of `reason` (a reason quoting what concerns it alone). */
  private fail(reason: string, about?: string, own?: string): void {
    if (this.fatal) return;
    this.fatal = reason;
    this.gate.stop(); // what it still writes is dropped (see listen): drained, it is not left blocked
    // A runner that broke the protocol is not trusted with another frame.
    if (this.pending.running) this.signalGroup("SIGKILL");
    const message = this.describe(reason);
    for (const [id, sink] of this.sinks) sink.onFatal(id === about && own ? this.describe(own) : message);
  }

  private describe(reason: string): string {
    const tail = this.stderr();
    return tail ? `${reason}; its stderr ended with: ${tailOf(tail, 1000)}` : reason;
  }
}

/** The attachment a line names, when it is a JSON object with one; else undefined. */
function attachmentOf(line: string): string | undefined {
  try {
    const value: unknown = JSON.parse(line);
    const attachment = (value as { attachment?: unknown } | null)?.attachment;
    return typeof attachment === "string" ? attachment : undefined;
  } catch {
    return undefined;
  }
}
