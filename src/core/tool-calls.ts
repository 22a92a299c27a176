// The harness's tool calls in a session: each is logged before it runs, goes through the permission policy
// (src/core/request-desk.ts), and gets exactly one `tool.result`, a made-up one when its turn ends first.
import type { NewEvent, SessionEvent } from "../protocol/events.js";
import type { ToolCallParams, ToolResult } from "../protocol/runner.js";
import type { AppendOptions } from "./event-log.js";
import type { InFlight } from "./in-flight.js";
import { errorResult } from "./log-writer.js";
import type { PendingRequests } from "./pending.js";
import type { RequestDesk, Verdict } from "./request-desk.js";
import { boundedResult } from "./tool-result-bound.js";
import type { BoundTools } from "./tools.js";

export interface ToolCallParts {
  pending: PendingRequests;
  desk: RequestDesk;
  append(events: NewEvent[], options?: AppendOptions): Promise<SessionEvent[]>;
  /** The running turn, if any, and the calls it has in flight (waited for before it settles). */
  running(): { id: string; toolCalls: InFlight } | undefined;
  tools(): Promise<BoundTools>;
}

export class ToolCalls {
  constructor(private readonly parts: ToolCallParts) {}

  /**
   * The harness's tool callback: log the intent durably, dispatch, answer (through `answer` when given: see
   * HarnessOptions.call), log the result.
   */
  call(
    turnId: string,
    call: ToolCallParams,
    signal: AbortSignal,
    answer?: (result: ToolResult) => void,
  ): Promise<ToolResult> {
    const turn = this.parts.running();
    if (!turn || turn.id !== turnId) return Promise.resolve(errorResult("no turn is running"));
    if (this.parts.pending.has("tool.call", call.id))
      return Promise.resolve(
        errorResult(
          `tool call id "${call.id}" is already in use by a call still waiting for its result; give each call an id of its own`,
        ),
      );
    // A call the log cannot hold is never run: it would leave a result without its call.
    const unloggable = notLoggable(call);
    if (unloggable) return this.refuse(turnId, call, unloggable);
    // Everything that needs no durable call is done while its commit is in flight: the policy's verdict (fixed
    // for the session; only "ask" has to wait, as its request is logged after the call) and the bound tools.
    const decided = this.parts.desk.decided(call.name);
    turn.toolCalls.start();
    return this.dispatch(turn.toolCalls, turnId, call, signal, decided, this.parts.tools(), answer);
  }

  private async dispatch(
    inFlight: InFlight,
    turnId: string,
    call: ToolCallParams,
    signal: AbortSignal,
    decided: Verdict | undefined,
    tools: Promise<BoundTools>,
    answer: ((result: ToolResult) => void) | undefined,
  ): Promise<ToolResult> {
    const { desk } = this.parts;
    try {
      await this.parts.append([{ type: "tool.call", turn: turnId, data: call }], AWAITED);
      const bound = await tools;
      // A tool the session does not have is refused as such (the refusal names the bound ones): no client is asked
      // to allow a call that could never run, and a harness cannot fill the clients' queue with made-up names.
      const verdict = bound.has(call.name)
        ? (decided ??
          (await desk.permit(
            turnId,
            { tool: call.name, arguments: call.arguments, tool_call_id: call.id },
            signal,
          )))
        : undefined;
      const whole =
        verdict === undefined || verdict.decision === "allow"
          ? await bound.call(call, signal)
          : errorResult(
              `permission to run tool "${call.name}" was denied: ${verdict.reason ?? "by a client"}`,
            );
      // The harness gets the result as the log keeps it: what the model reads is what a client reads of it.
      const { result, truncated } = boundedResult(whole);
      // The harness gets the result at once, as it always has (nothing waits on the result's commit, and the
      // harness's reaction to it can only be logged after it). Deferred, the result rides with the next commit,
      // typically the harness's next tool.call: one fdatasync per sequential round trip instead of two. Through
      // `answer` it leaves before the result is logged, in the same tick: the event's making and queueing run
      // while the runner reads it, not before it is sent.
      try {
        answer?.(result);
      } finally {
        desk.resolve(
          "tool.call",
          call.id,
          {
            type: "tool.result",
            turn: turnId,
            data: { id: call.id, ...result, ...(truncated ? { truncated } : {}) },
          },
          DEFERRED,
        );
      }
      return result;
    } catch (err) {
      return errorResult(`tool call could not be logged: ${(err as Error).message}`);
    } finally {
      inFlight.end();
    }
  }

  private async refuse(turnId: string, call: ToolCallParams, why: string): Promise<ToolResult> {
    const message = `tool call "${call.id}" (${call.name}) was refused: its arguments cannot be logged (${why})`;
    await this.parts.append([{ type: "harness.warning", turn: turnId, data: { message } }]).catch(() => {});
    return errorResult(`${message}; call it again with smaller, flatter arguments`);
  }

  /** Gives every call of `turn` still without a result one that says its outcome is unknown, and why. */
  settleLeftovers(turn: string, reason: string): void {
    const left = this.parts.pending.list(turn).filter((request) => request.kind === "tool.call");
    for (const request of left) {
      const result = errorResult(`${reason}; its outcome is unknown`);
      this.parts.desk.resolve("tool.call", request.id, {
        type: "tool.result",
        turn,
        data: { id: request.id, ...result },
      });
    }
  }
}

const DEFERRED: AppendOptions = Object.freeze({ deferred: true });
/** The harness waits on its call's commit: nothing of its turn goes on until the call is durable. */
const AWAITED: AppendOptions = Object.freeze({ awaited: true });

/** Nesting that JSON.stringify always manages; deeper arguments (or anything not plain JSON) are tried for real. */
const SURELY_LOGGABLE_DEPTH = 64;

/** Why the log could not hold this call (arguments nested too deep for JSON.stringify), or undefined. */
function notLoggable(call: ToolCallParams): string | undefined {
  // Serialising every call's arguments just to see that it can be done cost as much as the log's own line:
  // plain JSON values of modest depth are certain to serialise.
  try {
    if (plainJson(call.arguments, SURELY_LOGGABLE_DEPTH)) return undefined;
    JSON.stringify(call.arguments);
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}

/** Whether `value` is made only of strings, finite numbers, booleans, null, arrays and plain objects, `depth` deep at most. */
function plainJson(value: unknown, depth: number): boolean {
  switch (typeof value) {
    case "string":
    case "boolean":
      return true;
    case "number":
      return Number.isFinite(value);
    case "object": {
      if (value === null) return true;
      if (depth === 0) return false;
      if (Array.isArray(value)) {
        for (const item of value) if (!plainJson(item, depth - 1)) return false;
        return true;
      }
      const proto = Object.getPrototypeOf(value);
      if (proto !== Object.prototype && proto !== null) return false;
      for (const key in value)
        if (!plainJson((value as Record<string, unknown>)[key], depth - 1)) return false;
      return true;
    }
    default:
      return false;
  }
}
