// The one running turn of a CLI harness: prompt() waits on it, the CLI's stream settles it. Settling twice is a
// no-op, so an exit racing a final event cannot settle a turn twice.
import { HarnessError, type PromptOutcome, type TurnContext } from "../../core/harness.js";
import type { CliEvent } from "./events.js";

export interface RunningTurn {
  id: string;
  signal: AbortSignal;
  /** Set when Brain asked to interrupt: the CLI's own "aborted" ending then means `interrupted`. */
  interrupted: boolean;
  /** Resolves once the turn is settled or failed. */
  ended: Promise<void>;
  /** The ids of the calls this turn logged that have no result yet. */
  openCalls: Set<string>;
}

/**
 * Whether the turn logs `event`: a tool result only for a call it logged and has no result for. The session gave
 * every call of an ended turn its result, and a CLI can report a call's end late: opencode marks a tool part it
 * was asking about aborted only as the next prompt starts, which was logged in that turn as a second result.
 */
export function isTurnEvent(turn: RunningTurn, event: CliEvent): boolean {
  if (event.type === "tool.call") turn.openCalls.add(event.data.id);
  else if (event.type === "tool.result") return turn.openCalls.delete(event.data.id);
  return true;
}

export class TurnSlot {
  private turn: RunningTurn | undefined;
  private resolve: ((outcome: PromptOutcome) => void) | undefined;
  private reject: ((err: HarnessError) => void) | undefined;
  private end: (() => void) | undefined;

  get current(): RunningTurn | undefined {
    return this.turn;
  }

  /** Starts a turn; resolves when settle() or fail() is called for it. */
  begin(ctx: TurnContext): Promise<PromptOutcome> {
    if (this.turn) throw new HarnessError("brain_error", `turn ${this.turn.id} is still running`);
    const ended = new Promise<void>((resolve) => {
      this.end = resolve;
    });
    const turn: RunningTurn = {
      id: ctx.turn,
      signal: ctx.signal,
      interrupted: false,
      ended,
      openCalls: new Set(),
    };
    this.turn = turn;
    return new Promise<PromptOutcome>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
  }

  settle(interrupted = false): void {
    const turn = this.turn;
    if (!turn) return;
    const resolve = this.resolve;
    this.clear();
    resolve?.({ interrupted: interrupted || turn.interrupted });
  }

  /** Fails the running turn, unless it was being interrupted: then it settles as interrupted. */
  fail(err: HarnessError): void {
    const turn = this.turn;
    if (!turn) return;
    const { resolve, reject } = this;
    this.clear();
    if (turn.interrupted) resolve?.({ interrupted: true });
    else reject?.(err);
  }

  private clear(): void {
    this.end?.();
    this.end = undefined;
    this.turn = undefined;
    this.resolve = undefined;
    this.reject = undefined;
  }
}
