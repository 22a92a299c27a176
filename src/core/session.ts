// A live session: runs turns on its harness and writes everything that happens to its durable log. One turn at
// a time; steer and interrupt act on the running one. The harness is opened lazily (first prompt or
// checkpoint) and reopened after it broke, so a crashed runner never makes the session unusable.
import type { AnswerBody } from "../protocol/api.js";
import type { ErrorInfo, NewEvent, PromptImage, SessionEvent, TurnStatus } from "../protocol/events.js";
import { BetweenTurns } from "./between-turns.js";
import type { CheckpointManifest } from "./checkpoints/index.js";
import { anyKeyed, CommandKeys, type KeyedCommand, keyed } from "./command-keys.js";
import { closedWhileTaken, SessionError } from "./errors.js";
import { type AppendOptions, type EventLog, forEachEvent } from "./event-log.js";
import { type Harness, HarnessError } from "./harness.js";
import { hostStopped, LogWriter } from "./log-writer.js";
import type { PendingRequest } from "./pending.js";
import { checkImages } from "./prompt-images.js";
import type { Redactor } from "./redact.js";
import { type Answer, type ReplyFrom, RequestDesk } from "./request-desk.js";
import {
  type AskingTurn,
  askingTurn,
  deliverSteer,
  endedWithin,
  endTurn,
  interruptEvents,
  interruptHarness,
  newTurn,
  promptedHarness,
  queuedMark,
  type RunningTurn,
  refuseWhileRunning,
  steerTooLate,
  takeSteer,
} from "./running-turn.js";
import {
  closedWhileOpening,
  historyAhead,
  openHarness,
  type SessionParts,
  type StartedTurn,
  type TurnOutcome,
  verifyHistory,
} from "./session-parts.js";
import { SessionTools } from "./session-tools.js";
import { ToolCalls } from "./tool-calls.js";

export { SessionError } from "./errors.js";
export type { SessionParts, StartedTurn, TurnOutcome };

export class Session {
  private harness: Harness | undefined;
  private opening: Promise<Harness> | undefined;
  private readonly tools: SessionTools;
  private running: RunningTurn | undefined;
  /** The last turn's run, from its start to its turn.settled (or close-out): a close waits for it. */
  private turnRun: Promise<unknown> | undefined;
  private readonly writer: LogWriter;
  /** Permission requests and questions to the session's clients (asked by the harness or an edge's desk). */
  readonly desk: RequestDesk;
  private readonly toolCalls: ToolCalls;
  /** Which event recorded each command's idempotency key. */
  private readonly keys: CommandKeys;
  /** What the log redacts: requests are kept as sent, and redacted as clients see them (nui's HITL too). */
  readonly redactor: Redactor;
  private closed = false;
  private readonly closeSignal = new AbortController();
  private closing: Promise<void> | undefined;
  /** A summary-seeded session's history went out with a turn that completed: later prompts go as they are. */
  private preambled = false;
  private readonly betweenTurns = new BetweenTurns(() => this.parts.keptOut?.());

  private constructor(private readonly parts: SessionParts) {
    this.writer = new LogWriter(
      parts.log,
      () => this.running,
      (turn, err) => this.failTurn(turn as RunningTurn, err),
    );
    this.desk = new RequestDesk({
      pending: this.writer.pending,
      permissions: parts.permissions,
      append: (events, options) => this.append(events, options),
    });
    this.keys = new CommandKeys(parts.log);
    this.redactor = parts.redactor;
    this.tools = new SessionTools({
      tools: parts.tools,
      ...(parts.services ? { services: parts.services } : {}),
      append: (events) => this.append(events),
    });
    this.toolCalls = new ToolCalls({
      pending: this.writer.pending,
      desk: this.desk,
      append: (events, options) => this.append(events, options),
      running: () => this.running,
      tools: () => this.tools.get(),
    });
  }

  /** Opens a session from its log: passive, no harness is started. A turn the host died in is closed out. */
  static async open(parts: SessionParts): Promise<Session> {
    const session = new Session(parts);
    // Every turn left open, not only the last: a host that could not write a close-out went on to later turns.
    const open = new Set<string>();
    const state = parts.log.openState?.();
    const visit = (event: SessionEvent) => {
      session.writer.pending.observe(event);
      if (event.type === "turn.started" && event.turn) open.add(event.turn);
      if (event.type === "turn.settled" && event.turn) open.delete(event.turn);
    };
    if (state) state.requests.forEach(visit);
    else await forEachEvent(parts.log, visit); // a page at a time: a long log is never held whole
    for (const turn of state?.openTurns ?? []) open.add(turn);
    for (const turn of open) await session.append(hostStopped(session.writer.pending, turn));
    return session;
  }

  get id(): string {
    return this.parts.id;
  }

  get log(): EventLog {
    return this.parts.log;
  }

  get activeTurn(): string | undefined {
    return this.running?.id;
  }

  get askingTurn(): AskingTurn | undefined {
    return askingTurn(this.running);
  }

  pendingRequests(): PendingRequest[] {
    return this.redactor.redactDeep(this.writer.pending.list());
  }

  /** Starts the harness now rather than at the first prompt (it opens passively: no model or tool call). */
  async start(): Promise<void> {
    this.assertOpen();
    await this.ensureHarness();
  }

  /** Starts a turn and returns at once; `settled` says how it ended. A checkpoint being taken finishes first. */
  async prompt(text: string, input: { images?: PromptImage[]; key?: string } = {}): Promise<StartedTurn> {
    this.assertOpen();
    const images = checkImages(input.images, this.parts.factory, this.parts.harnessName);
    refuseWhileRunning(this.running);
    return this.betweenTurns.startTurn(async () => {
      // The last turn's close-out first: no turn starts while one is open in the log.
      await this.writer.closeOut();
      this.assertOpen();
      refuseWhileRunning(this.running);
      await historyAhead(this.parts, this.harness ?? this.opening);
      const started = this.startTurn(text, images, input.key);
      this.turnRun = started.then((s) => s.settled).catch(() => {});
      return started;
    });
  }

  private async startTurn(text: string, images?: PromptImage[], key?: string): Promise<StartedTurn> {
    const turn = newTurn();
    this.running = turn;
    // A harness not open yet opens (passive: no model or tool call) while the prompt becomes durable: waits overlap.
    const harness = this.harnessFor(turn);
    // Its failure is the turn's to report (runTurn awaits the same promise); a prompt that never starts drops it.
    harness.catch(() => {});
    try {
      await this.append([
        { type: "user.prompt", turn: turn.id, data: { text, ...(images ? { images } : {}), ...keyed(key) } },
        { type: "turn.started", turn: turn.id, data: {} },
      ]);
    } catch (err) {
      this.running = undefined;
      // The turn never started in the log: there is nothing to close out.
      this.writer.forget(turn.id);
      throw err;
    }
    return { turn: turn.id, settled: this.runTurn(turn, harness, text, images) };
  }

  async steer(text: string, key?: string): Promise<void> {
    const turn = this.requireRunning("steer");
    const queued = await queuedMark(this.parts, this.harness, this.opening);
    const harness = await promptedHarness(turn);
    if (this.requireRunning("steer") !== turn) throw steerTooLate();
    takeSteer(turn, text);
    await this.append([{ type: "user.steer", turn: turn.id, data: { text, ...queued, ...keyed(key) } }]);
    await deliverSteer(turn, harness, text);
  }

  async interrupt(key?: string): Promise<void> {
    const turn = this.requireRunning("interrupt");
    // Appended first (before the turn's close-out), but the harness hears of it now, not once durable (a runaway
    // agent stops on a stalled disk too), and before its tool calls are cancelled (interruptHarness says when).
    const recorded = this.append(interruptEvents(turn.id, keyed(key), !this.harness));
    await Promise.all([recorded, interruptHarness(turn, this.harness)]);
  }

  /**
   * Checkpoints the native state between turns (src/core/between-turns.ts): refused while a turn runs or starts;
   * a prompt that comes while it is taken starts its turn after it.
   */
  async checkpoint(key?: string): Promise<CheckpointManifest> {
    this.assertOpen();
    if (this.running)
      throw new SessionError("conflict", "a checkpoint is taken between turns: wait for the turn to settle");
    return this.betweenTurns.checkpoint(async () => {
      this.assertOpen();
      await this.writer.closeOut();
      const harness = await this.ensureHarness();
      const files = await harness.checkpoint();
      // What the log redacts no checkpoint may hold (a fork or restore would copy it on); a refusal names the session.
      const opts = { secrets: this.redactor.values, session: this.parts.id };
      const manifest = await this.parts.checkpoints.create(this.parts.nativeDir, files, opts);
      harness.checkpointed?.(files);
      const listed = manifest.files.map(({ path, size, append_only }) => ({ path, size, append_only }));
      await this.append([
        { type: "checkpoint.created", data: { id: manifest.id, files: listed, ...keyed(key) } },
      ]);
      return manifest;
    });
  }

  /** Answers a pending permission request or question exactly once (src/core/request-desk.ts). */
  answer(event: Answer): Promise<void> {
    return this.desk.answer(event);
  }

  /** A client's answer by request id, checked against the kind of request it answers; `by`: who sent it. */
  reply(requestId: string, body: AnswerBody, from: ReplyFrom = {}): Promise<void> {
    return this.desk.reply(requestId, body, this.parts.id, from);
  }

  /** The command sent with this idempotency key, if one ran (on any node): its event and what its client sent. */
  commandEvent(key: string): Promise<KeyedCommand | undefined> {
    return this.keys.find(key).catch((err) => Promise.reject(this.closed ? closedWhileTaken(this.id) : err));
  }

  /** Ends the turn, the harness and the log; a close asked for while one runs waits for that one. */
  close(): Promise<void> {
    this.closing ??= this.closeNow();
    return this.closing;
  }

  private async closeNow(): Promise<void> {
    if (this.running) await this.interrupt().catch(() => {});
    this.closed = true;
    // A checkpoint being taken ends first (later ones are refused): its files stored and logged, or not listed.
    await this.betweenTurns.settled();
    // A harness still starting is told to stop (HarnessOptions.signal) and waited for; it closes itself.
    this.closeSignal.abort();
    await this.opening?.catch(() => {});
    // The interrupted turn's turn.settled before session.closed (a harness may answer the interrupt before its turn
    // ends): a grace to end it, then closing the harness ends it. One that outlives both is closed out at next open.
    await endedWithin(this.turnRun, CLOSE_GRACE_MS);
    await this.dropHarness();
    await endedWithin(this.turnRun, CLOSE_GRACE_MS);
    await this.parts.services?.close().catch(() => {});
    await this.writer.closeOut().catch(() => {});
    await this.append([{ type: "session.closed", data: {} }]).catch(() => {});
    await this.parts.log.close();
  }

  private async runTurn(
    turn: RunningTurn,
    opening: Promise<Harness>,
    text: string,
    images?: PromptImage[],
  ): Promise<TurnOutcome> {
    let status: TurnStatus = "completed";
    let error: ErrorInfo | undefined;
    try {
      const harness = await opening;
      const ctx = { turn: turn.id, signal: turn.abort.signal, ...(images ? { images } : {}) };
      // Interrupted while the harness was still starting: it never heard of the interrupt, so do not prompt it.
      const sent = await this.withPreamble(text);
      const prompting = turn.abort.signal.aborted ? undefined : harness.prompt(sent, ctx);
      if (prompting) turn.reached(harness);
      const outcome = (await prompting) ?? { interrupted: true };
      if (outcome.interrupted) status = "interrupted";
      else this.preambled = true;
    } catch (err) {
      turn.ended = true;
      status = "failed";
      error =
        err instanceof HarnessError ? err.toInfo() : { code: "brain_error", message: (err as Error).message };
      if (!(err instanceof HarnessError) || err.code === "brain_error") await this.dropHarness();
    }
    endTurn(turn, status, error);
    await turn.toolCalls.idle();
    // turn.settled is appended behind what the turn emitted, without waiting for it: it joins the last commit
    // unless that has started. The log fails an append queued behind a failed one, so it is durable only once all
    // before it is, and a write failed while it waited fails it too: the close-out below then says so.
    if (!this.writer.isStalled) {
      this.toolCalls.settleLeftovers(turn.id, "the turn ended before the tool call finished");
      const data = error ? { status, error } : { status };
      try {
        await this.append([{ type: "turn.settled", turn: turn.id, data }]);
        this.running = undefined;
        // Queued before this returns to the event loop: a prompt that comes now starts its turn after it.
        if (this.parts.checkpointAfterTurn && status === "completed")
          await this.checkpoint().catch((err: Error) =>
            process.emitWarning(`session ${this.parts.id}: checkpoint after the turn failed: ${err.message}`),
          );
        return { turn: turn.id, ...data };
      } catch (err) {
        this.writer.stall(turn, err as Error);
      }
    }
    // The log failed during this turn: it failed, whatever the harness said, and its close-out says so once each
    // of its writes is durable or known lost.
    await this.writer.drain(turn);
    this.running = undefined;
    const failed = this.writer.ended(turn.failure?.toInfo());
    await this.writer.closeOut().catch(() => {});
    return { turn: turn.id, ...failed };
  }

  /** The first failed write of a turn fails it: stop it (the writer writes nothing more until its close-out). */
  private failTurn(turn: RunningTurn, err: Error): void {
    if (turn.failure) return;
    turn.failure = new HarnessError("brain_error", `could not write the event log: ${err.message}`);
    turn.abort.abort(turn.failure);
    if (this.running === turn) this.harness?.interrupt(turn.id).catch(() => {});
  }

  append(events: NewEvent[], options?: AppendOptions): Promise<SessionEvent[]> {
    const written = this.writer.append(events, options);
    if (!anyKeyed(events)) return written; // a tool call's append (no key) needs no step after its commit
    return written.then((durable) => {
      this.keys.observe(durable);
      return durable;
    });
  }

  private async ensureHarness(): Promise<Harness> {
    if (this.harness?.isAlive?.() === false) await this.dropHarness();
    if (this.harness) return this.harness;
    this.opening ??= this.tools
      .get()
      .then((tools) =>
        openHarness(this.parts, {
          tools: tools.schemas,
          emit: (event) => this.writer.emit(event),
          call: (turn, call, signal, answer) => this.toolCalls.call(turn, call, signal, answer),
          ...this.desk.forHarness(),
          signal: this.closeSignal.signal,
        }),
      )
      .then(async (harness) => {
        if (this.closed) {
          await harness.close().catch(() => {});
          throw closedWhileOpening(this.parts.id);
        }
        await verifyHistory(harness, this.parts);
        this.harness = harness;
        return harness;
      })
      .finally(() => {
        this.opening = undefined;
      });
    return this.opening;
  }

  private async withPreamble(text: string): Promise<string> {
    if (!this.parts.preamble || this.preambled) return text;
    return this.parts.preamble(text, await this.parts.log.read(0));
  }

  /** The turn's harness, reopened when a session service that failed its first start now offers tools. */
  private async harnessFor(turn: RunningTurn): Promise<Harness> {
    if (await this.tools.retry(turn.abort.signal)) {
      await this.opening?.catch(() => {});
      await this.dropHarness();
      this.assertOpen();
    }
    return this.ensureHarness();
  }

  private async dropHarness(): Promise<void> {
    const harness = this.harness;
    this.harness = undefined;
    await harness?.close().catch(() => {});
  }

  private requireRunning(what: string): RunningTurn {
    this.assertOpen();
    if (!this.running) throw new SessionError("conflict", `nothing to ${what}: no turn is running`);
    // Its harness is done with it: taken now, a steer would reach no one and be logged after its turn.settled.
    if (this.running.ended)
      throw new SessionError("conflict", `nothing to ${what}: turn ${this.running.id} has ended`);
    return this.running;
  }

  private assertOpen(): void {
    if (this.closed) throw closedWhileTaken(this.parts.id);
  }
}

const CLOSE_GRACE_MS = 10_000; // a close's wait for an interrupted turn, before and after its harness closes
