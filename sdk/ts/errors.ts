// The two ways a request can fail on the wire (docs/protocol.md#runner-stdio-protocol): `provider_error` when the model side failed,
// `brain_error` for everything else. A handler throws RunnerFailure to choose the code; any other error is
// reported as `brain_error` with its message.
import { inspect } from "node:util";
import type { RunnerError, RunnerErrorCode, RunnerMethod } from "../../src/protocol/runner.js";

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

/**
 * The message a request's failure is replied with, whatever the handler threw: an Error's message, a string, or
 * `<what> failed with <the value>` (undefined from a bare `reject()`, an object). Never throws itself (a message
 * getter that throws, an object with no prototype that String() cannot convert): the request must still be answered,
 * where a throw here was an unhandled rejection that ended the runner with every attachment's turn.
 */
export function thrownMessage(err: unknown, what: string): string {
  try {
    if (err instanceof Error) return err.message || err.name || "Error";
    if (typeof err === "string" && err) return err;
    return `${what} failed with ${inspect(err, { breakLength: Number.POSITIVE_INFINITY })}`;
  } catch {
    return `${what} failed with ${err instanceof Error ? "an Error" : `a ${typeof err}`} that could not be read`;
  }
}

/** thrownMessage with an Error's name before it ("TypeError: x is not a function"): names what was rejected. */
export function namedMessage(err: unknown, what: string): string {
  const message = thrownMessage(err, what);
  try {
    const name = err instanceof Error ? err.name : undefined;
    return typeof name === "string" && name && name !== message ? `${name}: ${message}` : message;
  } catch {
    return message;
  }
}

/** For the log: an Error's stack (where it was made, for the runner's author), else namedMessage. Never throws. */
export function described(err: unknown, what: string): string {
  try {
    const stack = err instanceof Error ? err.stack : undefined;
    if (typeof stack === "string" && stack) return stack;
  } catch {
    // a stack getter that throws: the message is all there is
  }
  return namedMessage(err, what);
}

/** What the reference schema finds wrong with a result the fast check did not accept, or undefined. */
export async function resultProblem(method: RunnerMethod, result: unknown): Promise<string | undefined> {
  const [{ RequestResults }, { describeIssues }] = await Promise.all([
    import("../../src/protocol/runner.js"),
    import("../../src/protocol/frames.js"),
  ]);
  const checked = RequestResults[method].safeParse(result);
  return checked.success ? undefined : describeIssues(checked.error);
}

export function brainError(message: string): RunnerError {
  return { code: "brain_error", message };
}

export function toWireError(err: unknown, method: RunnerMethod): RunnerError {
  const code = err instanceof RunnerFailure && err.code === "provider_error" ? err.code : "brain_error";
  return { code, message: thrownMessage(err, method) };
}
