// One run of an agent, whatever carries it: params in, events out through a sink, cancel through its signal.
import { randomUUID } from "node:crypto";
import { catchLeaks, withinScope } from "../leaks.js";
import type { NuiAgent } from "./agent.js";
import { failure } from "./failure.js";
import { type EventLimit, fitted } from "./fit.js";
import { approvalPayload, type HitlWaiters, hitlRequest, questionPayload } from "./hitl.js";
import type { Chunk, HarnessEvent, RunContext, RunParams } from "./types.js";

export interface RunSink {
  emit(event: HarnessEvent): void;
  /** Where protocol HITL answers arrive (stdio, TCP); absent over HTTP, which uses the REST API. */
  waiters?: HitlWaiters;
  signal: AbortSignal;
  /** How large an event the transport carries; default: a stdio or TCP host's line. */
  eventLimit?: EventLimit;
}

function isAsyncIterable(value: unknown): value is AsyncIterable<Chunk> {
  return !!value && typeof (value as AsyncIterable<Chunk>)[Symbol.asyncIterator] === "function";
}

function isIterable(value: unknown): value is Iterable<Chunk> {
  return (
    !!value && typeof value !== "string" && typeof (value as Iterable<Chunk>)[Symbol.iterator] === "function"
  );
}

/**
 * Calls one of the agent's hooks (getSessionId, onCancel, onShutdown). What it throws or rejects with goes to stderr:
 * a run must still end with its done and its reply, and the host must serve on, or the caller waits forever.
 */
export async function guarded<T>(
  agent: NuiAgent,
  hook: string,
  call: () => T | Promise<T>,
): Promise<T | undefined> {
  try {
    return await call();
  } catch (err) {
    process.stderr.write(`[${agent.name}] ${hook} failed: ${failure(err, hook)}\n`);
    return undefined;
  }
}

/**
 * Called as a host starts serving: a promise left rejected and unhandled fails the run it was made in (runAgent),
 * and one made outside every run is written to stderr; the host serves on (../leaks.ts).
 */
export function catchRunLeaks(agentName: string): void {
  catchLeaks((reason) =>
    process.stderr.write(
      `[${agentName}] an unhandled promise rejection outside any run (the host serves on): ${failure(reason, "a promise")}\n`,
    ),
  );
}

export async function runAgent(
  agent: NuiAgent,
  raw: Record<string, unknown>,
  sink: RunSink,
): Promise<{ runId: string; cancelled: boolean }> {
  const runId = typeof raw.runId === "string" && raw.runId ? raw.runId : randomUUID();
  const params = { ...raw, runId, message: typeof raw.message === "string" ? raw.message : "" } as RunParams;
  // Set once the run has ended (returned, threw, or left a rejection unhandled): what it emits later is dropped.
  let over = false;
  const end = (event: HarnessEvent) => {
    for (const piece of fitted(event, sink.eventLimit)) sink.emit({ runId, ...piece });
  };
  const emit = (event: HarnessEvent) => {
    if (!over) end(event);
  };
  const waiters = sink.waiters;
  const ask = (kind: "question" | "approval", payload: Record<string, unknown>) => {
    if (!waiters && !process.env.NUI_API_URL) {
      return Promise.reject(new Error("no NUI_API_URL: this transport cannot carry HITL answers"));
    }
    return hitlRequest(kind, payload, { runId, emit, waiters: waiters!, signal: sink.signal });
  };
  const ctx: RunContext = {
    runId,
    params,
    signal: sink.signal,
    emit,
    askUser: (options) => ask("question", questionPayload(options)),
    requestApproval: (options) => ask("approval", approvalPayload(options)),
  };
  const send = (chunk: Chunk) => {
    if (typeof chunk === "string") {
      if (chunk) emit({ type: "text", content: chunk });
    } else emit(chunk);
  };
  const body = async () => {
    const result = agent.run(params.message, runId, ctx);
    if (isAsyncIterable(result)) {
      for await (const chunk of result) {
        if (sink.signal.aborted || over) break; // cancelled: nothing more is sent
        send(chunk);
      }
    } else if (isIterable(result)) {
      for (const chunk of result) {
        if (sink.signal.aborted || over) break;
        send(chunk);
      }
    } else {
      await result;
    }
  };
  let leak: (why: string) => void = () => {};
  const leaked = new Promise<never>((_resolve, reject) => {
    leak = reject;
  });
  let failedBy = false;
  const scope = {
    leaked(reason: unknown) {
      const what = `an unhandled promise rejection in run ${runId}`;
      // A string: failure() gives it as is, the rejection's own description (stack frames included) in it.
      if (!over && !failedBy) {
        failedBy = true;
        return leak(`${what}: ${failure(reason)}`);
      }
      // The run is over, or already failed by an earlier one: said here, or it would be lost.
      const when = over ? "after it ended" : "after an earlier one failed it";
      process.stderr.write(`[${agent.name}] ${what}, ${when} (the host serves on): ${failure(reason)}\n`);
    },
  };
  try {
    await withinScope(scope, () => Promise.race([body(), leaked]));
  } catch (err) {
    if (!sink.signal.aborted) end({ type: "error", error: failure(err) });
  }
  over = true;
  const sessionId = await guarded(agent, "getSessionId", () => agent.getSessionId(runId));
  end({ type: "done", ...(sessionId ? { sessionId } : {}) });
  return { runId, cancelled: sink.signal.aborted };
}
