// The two ways a request can fail on the wire (docs/protocol.md#runner-stdio-protocol): `provider_error` when the model side failed,
// `brain_error` for everything else. A handler throws RunnerFailure to choose the code; any other error is
// reported as `brain_error` with its message.
import type { RunnerErrorCode } from "../../src/protocol/runner.js";

export class RunnerFailure extends Error {
  override name = "RunnerFailure";
  constructor(
    readonly code: RunnerErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/** A provider's failure, replied as `provider_error` with the provider's message. */
export function providerError(message: string): RunnerFailure {
  return new RunnerFailure("provider_error", message);
}

/** Thrown by `turn.callTool` once the turn is interrupted: nothing more may be asked of Brain in this turn. */
export class TurnInterrupted extends Error {
  override name = "AbortError";
  constructor(message = "the turn was interrupted") {
    super(message);
  }
}
