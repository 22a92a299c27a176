// What one attachment (ProcessHarness) keeps of its requests in flight and of its running turn.
import type { HarnessError, PromptOutcome } from "../../core/harness.js";
import type { RunnerMethod } from "../../protocol/runner.js";

export interface Pending {
  method: RunnerMethod;
  turn: string | undefined;
  resolve(result: unknown): void;
  reject(err: HarnessError): void;
}

export interface ActiveTurn {
  id: string;
  /** Its tool calls': aborted with the turn, or by `calls` as its attachment is let go (ProcessHarness.letCallsGo). */
  signal: AbortSignal;
  calls: AbortController;
  /** Settles the turn without the runner's reply (after a kill). */
  settle?: (outcome: PromptOutcome) => void;
  /** Set once interrupted: cancels what fires if the runner has not settled in time. */
  grace?: () => void;
  /** The runner has answered the prompt: the turn is over, though `prompt` returns only a few microtasks later. */
  answered?: boolean;
}
