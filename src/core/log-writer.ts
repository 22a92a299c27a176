// How a session writes its log: harness events batched per tick, the index of requests kept in step, and the
// rule that keeps a failed write from hiding: after a turn's first failed write nothing more is written (a later
// event after a lost one would leave a gap no reader could see) until the turn's close-out is durable.
import type { ErrorInfo, NewEvent, SessionEvent } from "../protocol/events.js";
import type { ToolResult } from "../protocol/runner.js";
import { type AppendOptions, type EventLog, forEachEvent } from "./event-log.js";
import type { InFlight } from "./in-flight.js";
import { PendingRequests } from "./pending.js";
import { boundedEvent } from "./tool-result-bound.js";

/** What the writer needs of a running turn. */
export interface TurnWrites {
  id: string;
  /** The turn's appends in flight: it settles only once each is durable or known lost. */
  writes: InFlight;
}

/** A turn whose write failed; `settled` is its turn.settled's data, once the turn has ended. */
interface Stalled {
  turn: string;
  error: Error;
  settled?: { status: "failed"; error: ErrorInfo };
}

/** What a harness emitted is appended for the log's sake only: nothing reads the events back. */
const IGNORE_RESULT: AppendOptions = { ignoreResult: true };

export class LogWriter {
  /**
   * Requests waiting for an answer, kept in step with every append (rebuilt from the log after a failure). One
   * object for good: the session's desk and tool calls hold it, and a replaced one left them reading a stale index.
   */
  readonly pending = new PendingRequests();
  private emitted: NewEvent[] = [];
  private stalled: Stalled | undefined;
  private closingOut: Promise<void> | undefined;
  /** The settle functions of the last turn that wrote (see settlers). */
  private settling: { turn: TurnWrites; then: [() => void, (err: Error) => void] } | undefined;

  constructor(
    readonly log: EventLog,
    /** The running turn: a failed write fails it. */
    private readonly running: () => TurnWrites | undefined,
    /** Told once, of the first failed write while `turn` runs. */
    private readonly onFailure: (turn: TurnWrites, err: Error) => void,
  ) {}

  /** True while a turn's close-out waits to be written: nothing else is. */
  get isStalled(): boolean {
    return this.stalled !== undefined;
  }

  /**
   * Harness events are gathered for the rest of the tick and appended as one batch: a runner's stdout chunk
   * carries hundreds of deltas, and one append per event was the relay's main cost.
   */
  emit(event: NewEvent): void {
    if (this.emitted.length === 0) queueMicrotask(() => this.flush());
    this.emitted.push(event);
  }

  flush(): void {
    if (this.emitted.length === 0) return;
    const batch = this.emitted;
    this.emitted = [];
    this.write(batch, IGNORE_RESULT).catch(() => {}); // a failure stalls the turn (write)
  }

  append(events: NewEvent[], options?: AppendOptions): Promise<SessionEvent[]> {
    this.flush(); // what the harness emitted before this keeps its place in the log
    return this.write(events, options);
  }

  /** Resolves once every write of `turn` is durable or known lost. */
  async drain(turn: TurnWrites): Promise<void> {
    this.flush();
    await turn.writes.idle();
  }

  /** The first failed write of a turn: nothing more is written until its close-out. */
  stall(turn: TurnWrites, err: Error): void {
    if (this.stalled) return;
    this.stalled = { turn: turn.id, error: err };
    this.onFailure(turn, err);
  }

  /** The stalled turn never started in the log (its first write failed): there is nothing to close out. */
  forget(turn: string): void {
    if (this.stalled?.turn === turn) this.stalled = undefined;
  }

  /** The stalled turn has ended: returns how its close-out will say it ended. */
  ended(failure: ErrorInfo | undefined): { status: "failed"; error: ErrorInfo } {
    const stalled = this.stalled!;
    stalled.settled = {
      status: "failed",
      error: failure ?? {
        code: "brain_error",
        message: `could not write the event log: ${stalled.error.message}`,
      },
    };
    return stalled.settled;
  }

  /** Makes the stalled turn's close-out durable, or throws the log's error. Nothing is written before it. */
  closeOut(): Promise<void> {
    const stalled = this.stalled;
    if (!stalled?.settled) return Promise.resolve(); // none, or its turn has not ended yet
    const settled = stalled.settled;
    this.closingOut ??= (async () => {
      // The index was kept by what was sent, not by what became durable: rebuild it from the log.
      const durable = new PendingRequests();
      const state = this.log.openState?.();
      if (state) for (const event of state.requests) durable.observe(event);
      else await forEachEvent(this.log, (event) => durable.observe(event));
      const events = closingEvents(durable, stalled.turn, "the event log could not be written", settled);
      await this.log.append(events);
      for (const event of events) durable.observe(event);
      this.pending.adopt(durable);
      this.stalled = undefined;
    })().finally(() => {
      this.closingOut = undefined;
    });
    return this.closingOut;
  }

  private write(events: NewEvent[], options?: AppendOptions): Promise<SessionEvent[]> {
    if (this.stalled) return Promise.reject(this.stalled.error);
    // Every tool result the log takes, Brain's tools' and those a harness reports of its own, is bounded here.
    events = events.map(boundedEvent);
    for (const event of events) this.pending.observe(event);
    const written = this.log.append(events, options);
    const turn = this.running();
    if (turn) {
      turn.writes.start();
      const [done, failed] = this.settlers(turn);
      written.then(done, failed);
    }
    return written;
  }

  /**
   * What a turn's write does once durable or lost: the functions are made once per turn, not per append (a tool
   * call appends twice, a runner's stdout chunk once).
   */
  private settlers(turn: TurnWrites): [() => void, (err: Error) => void] {
    if (this.settling?.turn === turn) return this.settling.then;
    const done = () => turn.writes.end();
    const then: [() => void, (err: Error) => void] = [
      done,
      (err) => {
        this.stall(turn, err);
        done();
      },
    ];
    this.settling = { turn, then };
    return then;
  }
}

/**
 * The close-out of a turn that ended without answers to its requests (`cause`: why): an answer for each request
 * of `turn` still open in `pending`, then its turn.settled. A tool call gets an error result (its outcome is
 * unknown), a permission request is denied and a question left unanswered: nothing waits on them any more, and
 * a request left open would be listed and take a client's answer (an "allow" that allows nothing) for good,
 * across restarts too.
 */
export function closingEvents(
  pending: PendingRequests,
  turn: string,
  cause: string,
  settled: { status: "failed"; error: ErrorInfo },
): NewEvent[] {
  const reason = `${cause} while the request was pending; its turn has ended`;
  const answers = pending.list(turn).map((request): NewEvent => {
    const { id } = request;
    if (request.kind === "permission.requested")
      return {
        type: "permission.resolved",
        turn,
        data: { id, decision: "deny", reason, unanswered: "cancelled" },
      };
    if (request.kind === "question.requested")
      return { type: "question.answered", turn, data: { id, answer: "", reason, unanswered: "cancelled" } };
    const result = errorResult(`${cause} while the tool call was running; its outcome is unknown`);
    return { type: "tool.result", turn, data: { id, ...result } };
  });
  return [...answers, { type: "turn.settled", turn, data: settled }];
}

/** The close-out of a turn the host died in: failed, and each of its requests answered (nothing waits on them). */
export function hostStopped(pending: PendingRequests, turn: string): NewEvent[] {
  const error: ErrorInfo = { code: "brain_error", message: "the host stopped while this turn was running" };
  return closingEvents(pending, turn, "the host stopped", { status: "failed", error });
}

export function errorResult(text: string): ToolResult {
  return { content: [{ type: "text", text }], is_error: true };
}
