// Human in the loop for TypeScript extensions. With NUI_API_URL set (nui, and Brain for the hosts it starts):
// nui's REST API, create then wait, announcing the request as a `hitl_request` event. Without it: over the
// protocol, a `hitl_request` event answered by a `harness.hitl_response` notification.
import { randomUUID } from "node:crypto";
import type { ApprovalOptions, AskUserOptions, HarnessEvent, HitlResponse } from "./types.js";

export function apiUrl(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const value = (env.NUI_API_URL ?? "").trim();
  return value ? value.replace(/\/+$/, "") : undefined;
}

export function questionPayload(options: AskUserOptions): Record<string, unknown> {
  return { questions: options.questions ?? [], title: options.title ?? "", message: options.message ?? "" };
}

export function approvalPayload(options: ApprovalOptions): Record<string, unknown> {
  return {
    title: options.title ?? "",
    message: options.message ?? "",
    toolName: options.toolName ?? "",
    toolInput: options.toolInput ?? {},
    description: options.description ?? "",
  };
}

/**
 * One call to `path` under NUI_API_URL (`base`). Its failure names the path only, as nui_hitl.py's does: the base
 * holds the secret that reaches the session's requests (Brain's `/<token>`, the daemon's `/nui/<token>`), and the
 * message usually ends as the run's error, which Brain logs for every client of the session to read.
 */
async function rest(method: string, base: string, path: string, body?: unknown): Promise<unknown> {
  let response: Response;
  try {
    response = await fetch(`${base}${path}`, {
      method,
      headers: { accept: "application/json", ...(body ? { "content-type": "application/json" } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
  } catch (err) {
    // fetch's own words ("fetch failed", its cause's "connect ECONNREFUSED ...", "Failed to parse URL from <url>").
    const cause = (err as Error & { cause?: Error }).cause?.message ?? (err as Error).message;
    throw new Error(
      `HITL ${method} NUI_API_URL${path}: cannot be reached (${cause.split(base).join("NUI_API_URL")})`,
    );
  }
  const text = await response.text();
  if (!response.ok)
    throw new Error(`HITL ${method} NUI_API_URL${path} failed (${response.status}): ${text.trim()}`);
  return text ? JSON.parse(text) : {};
}

/** Waiting protocol requests of one connection, answered by `harness.hitl_response`. */
export class HitlWaiters {
  private readonly waiting = new Map<string, { runId: string; resolve: (r: HitlResponse) => void }>();

  answer(params: { requestId?: unknown; response?: unknown }): void {
    const id = typeof params.requestId === "string" ? params.requestId : "";
    const waiter = this.waiting.get(id);
    if (!waiter) return;
    this.waiting.delete(id);
    waiter.resolve((params.response ?? { requestId: id, status: "answered" }) as HitlResponse);
  }

  /** A cancelled run's questions end as `cancelled`. */
  cancelRun(runId: string): void {
    for (const [id, waiter] of this.waiting) {
      if (waiter.runId !== runId) continue;
      this.waiting.delete(id);
      waiter.resolve({ requestId: id, status: "cancelled", answers: { reason: "the run was cancelled" } });
    }
  }

  wait(requestId: string, runId: string): Promise<HitlResponse> {
    return new Promise((resolve) => this.waiting.set(requestId, { runId, resolve }));
  }
}

/** One HITL request from a run, by whichever route is available. */
export async function hitlRequest(
  kind: "question" | "approval",
  payload: Record<string, unknown>,
  run: { runId: string; emit: (event: HarnessEvent) => void; waiters: HitlWaiters; signal: AbortSignal },
): Promise<HitlResponse> {
  const base = apiUrl();
  if (base) {
    const created = (await rest("POST", base, "/api/hitl/requests", {
      kind,
      payload,
      sessionId: process.env.NUI_SESSION_ID ?? "",
      runId: run.runId,
    })) as Record<string, unknown>;
    run.emit({ type: "hitl_request", ...created, runId: run.runId, kind, payload });
    return (await rest(
      "GET",
      base,
      `/api/hitl/requests/${encodeURIComponent(String(created.requestId))}/wait`,
    )) as HitlResponse;
  }
  const requestId = randomUUID();
  const answered = run.waiters.wait(requestId, run.runId);
  if (run.signal.aborted) run.waiters.cancelRun(run.runId);
  run.emit({ type: "hitl_request", requestId, runId: run.runId, kind, payload, status: "pending" });
  return answered;
}
