// One attachment on a runner process: the Harness side of seed A's stdio protocol. Requests are correlated by
// id, replies must echo the attachment and turn, events and tool calls must name the active turn.
import { randomUUID } from "node:crypto";
import {
  type ExpectedHistory,
  type Harness,
  HarnessError,
  type HarnessOptions,
  type PromptOutcome,
  type TurnContext,
} from "../../core/harness.js";
import { tailOf } from "../../core/redact.js";
import { describeIssues } from "../../protocol/frames.js";
import { clip } from "../../protocol/jsonrpc.js";
import type {
  NativeFile,
  RunnerMethod,
  RunnerReply,
  RunnerToBrainFrame,
  ToolCallRequest,
  ToolResult,
} from "../../protocol/runner.js";
import { OpenParams, RequestResults } from "../../protocol/runner.js";
import { ranOut } from "../read-gate.js";
import { WarningLimit } from "../warning-limit.js";
import type { ActiveTurn, Pending } from "./attachment-state.js";
import type { AttachmentTimeouts } from "./attachment-timeouts.js";
import { CallPlaces } from "./call-places.js";
import { missingRunnerHistory } from "./runner-history.js";
import type { RunnerProcess } from "./runner-process.js";

export class ProcessHarness implements Harness {
  readonly attachment = randomUUID();
  private readonly toolCalls: CallPlaces;
  private readonly pending = new Map<string, Pending>();
  private activeTurn: ActiveTurn | undefined;
  private nextId = 1;
  private broken: string | undefined;
  /** Given up or closed: what its tool calls still return is not sent to a runner that no longer serves it. */
  private gone = false;
  /** The `detach` sent (see detachOnce). */
  private detaching: Promise<unknown> | undefined;
  /** The runner never answered `open` in time (hung, or too slow), as opposed to refusing it. */
  openUnanswered = false;
  /** A runner can cause a warning per line it writes (late events, stray replies): the log gets a few a turn. */
  private readonly warnings = new WarningLimit((message) =>
    this.options.emit({ type: "harness.warning", data: { message } }),
  );
  private endFirstTurn: () => void = () => {};
  /** Resolves once the first prompt on this attachment has settled (or the attachment closed). */
  readonly firstTurnEnded = new Promise<void>((resolve) => {
    this.endFirstTurn = resolve;
  });

  constructor(
    private readonly runner: RunnerProcess,
    private readonly options: HarnessOptions,
    private readonly timeouts: AttachmentTimeouts,
    private readonly release: (harness: ProcessHarness) => Promise<void>,
    /** false: the runner is configured with `verify_history: false`. */
    private readonly verifiesHistory = true,
    /** true: a shared host, whose other sessions a kill for this attachment's sake would take down with it. */
    private readonly shared = false,
  ) {
    this.toolCalls = new CallPlaces(runner.spec.maxToolCallsWaiting);
    runner.attach(this.attachment, {
      onFrame: (frame) => this.onFrame(frame),
      onDelta: (turn, data) => this.onDelta(turn, data),
      onWarning: (message) => this.warn(message),
      runningTurn: () => this.activeTurn?.id,
      onFatal: (message) => this.onFatal(message),
      backlog: options.backlog,
    });
  }

  async open(): Promise<void> {
    const params = OpenParams.parse({
      session_id: this.options.sessionId,
      dir: this.options.dir,
      config: this.options.config,
      tools: this.options.tools,
      provider: this.options.provider,
    });
    await this.request("open", params, undefined, this.timeouts.openMs);
  }

  async prompt(text: string, ctx: TurnContext): Promise<PromptOutcome> {
    if (this.activeTurn)
      throw new HarnessError("brain_error", "a turn is already running on this attachment");
    const calls = new AbortController();
    const active: ActiveTurn = { id: ctx.turn, signal: AbortSignal.any([ctx.signal, calls.signal]), calls };
    this.activeTurn = active;
    try {
      const reply = this.request("prompt", { text }, ctx.turn, 0) as Promise<{ interrupted?: boolean }>;
      // An interrupt that outlives its grace period kills the runner and settles the turn from here.
      const forced = new Promise<PromptOutcome>((resolve) => {
        if (this.activeTurn) this.activeTurn.settle = resolve;
      });
      const result = await Promise.race([
        reply.then((r) => ({ interrupted: r.interrupted === true })),
        forced,
      ]);
      return { interrupted: result.interrupted || ctx.signal.aborted };
    } finally {
      active.grace?.();
      this.activeTurn = undefined;
      this.warnings.flush(`runner "${this.runner.spec.name}"`);
      this.endFirstTurn();
    }
  }

  /**
   * Whether the runner's native dir holds the conversation (see missingRunnerHistory). A runner configured with
   * `verify_history: false` (stateless, or keeping its conversation where Brain cannot read it) is not checked.
   */
  async verify(expected: ExpectedHistory): Promise<string | undefined> {
    if (!this.verifiesHistory) return undefined;
    return missingRunnerHistory(this.runner.spec.name, this.options.dir, expected);
  }

  async steer(text: string, turn: string): Promise<void> {
    await this.request("steer", { text }, turn, this.timeouts.requestMs);
  }

  async interrupt(turn: string): Promise<void> {
    const active = this.activeTurn;
    if (!active || active.id !== turn || active.grace) return;
    // Counted only while its stdout is read (see ReadGate): a runner whose answer waits unread in the pipe while
    // the session's log is behind is not killed for it, blamed for a turn it settled, and what it wrote lost.
    active.grace = this.runner.afterRead(this.timeouts.interruptGraceMs, (end) => {
      if (this.activeTurn !== active) return;
      const late = `runner did not settle the interrupted turn${ranOut(end, this.timeouts.interruptGraceMs, "grace")}`;
      active.settle?.({ interrupted: true });
      if (this.shared) return this.letGo(late);
      this.warn(`${late}; killed it`);
      // Broken from now, not from the exit that follows: a prompt sent in between would go to the dying runner
      // and fail; marked broken, the session drops this attachment and the next prompt starts a fresh runner.
      this.onFatal("the runner was killed after an interrupt it did not settle");
      this.runner.kill();
    });
    try {
      await this.request("interrupt", null, turn, this.timeouts.interruptGraceMs);
    } catch {
      // The grace timer settles the turn if the runner neither answers nor stops.
    }
  }

  /**
   * A shared host's turn that did not settle: a kill would end every other session's turn too, so only this
   * attachment is let go (detach, which the SDK answers by ending the turn), and the session opens a fresh one.
   */
  private letGo(late: string): void {
    this.warn(`${late}; its attachment was detached, and the shared runner goes on for its other sessions`);
    this.giveUp(
      "the shared runner did not settle an interrupted turn; this session's attachment was detached",
    );
  }

  /**
   * Fails this attachment for good with `message`. A shared host is told (detach), or it would keep the
   * attachment's state for ever: the session drops a broken attachment without a word to the runner (close), and
   * the host's other sessions keep the process running. A runner of its own is stopped as the session drops it.
   */
  private giveUp(message: string): void {
    // Asked before the attachment is marked broken (request refuses then); nobody waits for its answer.
    if (this.shared) this.detachOnce(this.timeouts.requestMs).catch(() => {});
    this.letCallsGo(message);
    this.onFatal(message);
    // What the runner still writes for it, the detach's answer among them, is dropped from here (RunnerProcess).
    if (this.shared) this.runner.detach(this.attachment);
  }

  /** Aborts the running turn's tool calls (always during a turn), whose answers are dropped from now. */
  private letCallsGo(why: string): void {
    this.gone = true;
    this.activeTurn?.calls.abort(new HarnessError("brain_error", why));
  }

  /** One `detach` per attachment, whichever of close and giveUp asks first (a grace may end during a close). */
  private detachOnce(timeoutMs: number): Promise<unknown> {
    this.detaching ??= this.request("detach", null, undefined, timeoutMs);
    return this.detaching;
  }

  async checkpoint(): Promise<NativeFile[]> {
    return (await this.request("checkpoint", null, undefined, this.timeouts.requestMs)) as NativeFile[];
  }

  /** Sends `detach` so a shared host can release this attachment, then lets the factory decide the process's fate. */
  async close(): Promise<void> {
    if (!this.broken && this.runner.alive) {
      try {
        await this.detachOnce(Math.min(this.timeouts.requestMs, 5_000));
      } catch {
        // A runner that cannot detach is stopped by the release below all the same.
      }
    }
    this.runner.detach(this.attachment);
    this.letCallsGo("the session closed");
    this.rejectAll("the session closed");
    this.endFirstTurn();
    await this.release(this);
  }

  isAlive(): boolean {
    return this.broken === undefined && this.runner.alive;
  }

  private request(
    method: RunnerMethod,
    params: unknown,
    turn: string | undefined,
    timeoutMs: number,
  ): Promise<unknown> {
    if (this.broken) return Promise.reject(new HarnessError("brain_error", this.broken));
    const id = String(this.nextId++);
    return new Promise((resolve, reject) => {
      let cancel: (() => void) | undefined;
      const done = () => {
        cancel?.();
        this.pending.delete(id);
      };
      this.pending.set(id, {
        method,
        turn,
        resolve: (result) => {
          done();
          resolve(result);
        },
        reject: (err) => {
          done();
          reject(err);
        },
      });
      // Counted only while the runner's stdout is read: its answer may wait unread while the log is behind.
      if (timeoutMs > 0) {
        cancel = this.runner.afterRead(timeoutMs, (end) => {
          const late = ranOut(end, timeoutMs, "timeout", "s");
          const message = `runner "${this.runner.spec.name}" did not answer "${method}"${late}`;
          this.pending.get(id)?.reject(new HarnessError("brain_error", this.withStderr(message)));
          if (method === "open") this.openUnanswered = true;
          // A shared host is left to its other sessions: this attachment is detached as the open fails.
          if (method === "open" && !this.shared) this.runner.kill();
        });
      }
      const frame = { attachment: this.attachment, ...(turn ? { turn } : {}), id, method, params };
      try {
        this.runner.send(frame as never);
      } catch (err) {
        // Too large to frame: this request fails, the runner (and its other attachments) never sees it.
        this.pending
          .get(id)
          ?.reject(new HarnessError("brain_error", `"${method}": ${(err as Error).message}`));
      }
    });
  }

  private onFrame(frame: RunnerToBrainFrame): void {
    if ("event" in frame) return this.onEvent(frame.event, frame.turn, frame.data);
    if ("method" in frame) return this.onToolCall(frame);
    this.onReply(frame);
  }

  /** The runner's deltas, most of its frames, skip onFrame's tests of the frame's kind. */
  private onDelta(turn: string, data: { readonly text: string }): void {
    this.onEvent("assistant.delta", turn, data);
  }

  /** Why a frame for `frameTurn` is not taken, or undefined when that turn is running. */
  private notRunning(frameTurn: string): string | undefined {
    const active = this.activeTurn;
    if (frameTurn !== active?.id) return "which is not running";
    // Frames read with the prompt's answer are handled before the turn can end: it ends at the answer.
    return active.answered ? "which has ended (its prompt was answered)" : undefined;
  }

  private onEvent(event: string, frameTurn: string, data: unknown): void {
    const turn = this.activeTurn?.id;
    const gone = this.notRunning(frameTurn);
    if (gone) return this.warn(`"${event}" event for turn "${clip(frameTurn)}", ${gone}; ignored`);
    // The turn's own id, equal to the frame's: the frame's copy is a slice of its line, which an event waiting
    // for its commit would otherwise keep alive whole.
    this.options.emit({ type: event, turn, data } as never);
  }

  private onReply(reply: RunnerReply): void {
    const pending = this.pending.get(reply.id);
    if (!pending) return this.warn(`reply for unknown request id "${clip(reply.id)}" ignored`);
    // Answered, even wrongly, the prompt is settled: so is its turn (the only one, as is its prompt).
    if (pending.method === "prompt" && this.activeTurn) this.activeTurn.answered = true;
    if (reply.turn !== pending.turn) {
      const got = clip(reply.turn ?? "(none)");
      const want = pending.turn ?? "(none)";
      return pending.reject(
        new HarnessError(
          "brain_error",
          `reply to "${pending.method}" carried turn "${got}", expected "${want}"`,
        ),
      );
    }
    if ("error" in reply) return pending.reject(new HarnessError(reply.error.code, reply.error.message));
    const parsed = RequestResults[pending.method].safeParse(reply.result);
    if (!parsed.success) {
      const message = `invalid result for "${pending.method}": ${describeIssues(parsed.error)}`;
      return pending.reject(new HarnessError("brain_error", message));
    }
    pending.resolve(parsed.data);
  }

  /**
   * Logs, checks and runs the call through the session, then answers it. Plain callbacks rather than async
   * functions: thousands of calls a second each paid for several promises and closures here.
   */
  private onToolCall(frame: ToolCallRequest): void {
    if (this.toolCalls.awaits(frame.id))
      return this.giveUp(
        `the runner sent a second tool.call "${clip(frame.id)}" while the first awaits its answer (an answer names its call by that id alone, so either could get the other's result); a runner gives each tool.call frame an id of its own`,
      );
    const turn = this.activeTurn;
    const gone = this.notRunning(frame.turn);
    if (!turn || gone) {
      this.warn(`tool.call "${clip(frame.params.name)}" for turn "${clip(frame.turn)}", ${gone}; refused`);
      return this.answer(frame, refusal("no turn is running"));
    }
    const runner = this.runner;
    runner.openCalls++;
    let sent = false;
    // Once: by the session as soon as the result is known (before it is logged), or by the call's promise.
    const answered = (result: ToolResult) => {
      if (sent) return;
      sent = true;
      this.toolCalls.release(frame.id);
      try {
        if (!this.gone) this.answer(frame, result);
      } finally {
        runner.openCalls--; // a miscount would cork every later answer
      }
    };
    const failed = (err: Error) => answered(refusal(`tool call failed: ${err.message}`));
    const run = () => {
      try {
        this.options.call(turn.id, frame.params, turn.signal, answered).then(answered, failed);
      } catch (err) {
        failed(err as Error);
      }
    };
    const refused = this.toolCalls.take(frame.id, frame.params.arguments, run);
    if (refused === undefined) return;
    runner.openCalls--;
    this.warn(`tool.call "${clip(frame.params.name)}" refused: ${refused}`);
    this.answer(frame, refusal(`tool call refused: ${refused}; call it again once some have returned`));
  }

  private answer(frame: ToolCallRequest, result: ToolResult): void {
    const reply = (r: ToolResult) =>
      this.runner.send({ attachment: this.attachment, turn: frame.turn, id: frame.id, result: r });
    try {
      reply(result);
    } catch (err) {
      // A result too large for one frame reaches the model as an error it can act on, not as a dead runner; the
      // log, which holds the result the tool gave, says the runner got that error instead.
      const why = `tool result not sent: ${(err as Error).message}`;
      reply(refusal(why));
      this.warn(`tool call "${clip(frame.id)}": the runner got an error in place of its result (${why})`);
    }
  }

  private onFatal(message: string): void {
    this.broken = message;
    this.rejectAll(message);
  }

  private rejectAll(message: string): void {
    for (const pending of [...this.pending.values()])
      pending.reject(new HarnessError("brain_error", message));
  }

  private warn(message: string): void {
    this.warnings.warn(message);
  }

  private withStderr(message: string): string {
    const tail = this.runner.stderr();
    return tail ? `${message}; its stderr ended with: ${tailOf(tail, 1000)}` : message;
  }
}

const refusal = (text: string): ToolResult => ({ content: [{ type: "text", text }], is_error: true });
