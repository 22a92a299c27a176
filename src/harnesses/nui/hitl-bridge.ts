// nui's human-in-the-loop requests as Brain requests. An `approval` becomes a permission request, a `question`
// (or `freeform`) one question per entry of `payload.questions` (or the message itself). The Brain request
// carries nui's requestId as its id, so a client answers it by the id the extension knows. The answer goes
// back as nui's response envelope: `answered` with `answers`, `declined`, `expired` when no one answered in
// time, `cancelled` when the turn was interrupted.
import { randomUUID } from "node:crypto";
import type { AskEnding, HarnessOptions } from "../../core/harness.js";
import { whyStopped } from "../../core/running-turn.js";
import type { Question } from "../../protocol/events.js";
import {
  HITL_SCHEMA_VERSION,
  type HitlCreateBody,
  type HitlKind,
  HitlQuestion,
  type HitlRequestEnvelope,
  type HitlResponseEnvelope,
  type HitlStatus,
} from "../../protocol/nui/hitl.js";

const DEFAULT_TTL_SECONDS = 3600;

export interface HitlTurn {
  turn: string;
  signal: AbortSignal;
}

/**
 * nui's request envelope for a create body (the REST API) or a `hitl_request` event. `maxWaitMs`, the session's ask
 * timeout, bounds its ttl: the shorter of the two is the request's wait, and the envelope says it (`expiresAt`
 * exactly, `ttlSeconds` in whole seconds, rounded up), so nui's UI and SDKs are not promised a wait Brain cuts.
 */
export function requestEnvelope(
  body: HitlCreateBody,
  defaults: { sessionId: string; runId?: string; maxWaitMs?: number },
) {
  const now = new Date();
  const waitMs = Math.min((body.ttlSeconds ?? DEFAULT_TTL_SECONDS) * 1000, defaults.maxWaitMs ?? Infinity);
  const ttlSeconds = Math.ceil(waitMs / 1000);
  const envelope: HitlRequestEnvelope = {
    schemaVersion: HITL_SCHEMA_VERSION,
    requestId: body.requestId ?? randomUUID(),
    sessionId: body.sessionId || defaults.sessionId,
    kind: body.kind ?? "question",
    payload: body.payload ?? {},
    ttlSeconds,
    status: "delivered",
    createdAt: now.toISOString(),
    expiresAt: new Date(now.getTime() + waitMs).toISOString(),
    routing: body.routing ?? { channels: ["nui-ui"] },
  };
  const runId = body.runId || defaults.runId;
  if (runId) envelope.runId = runId;
  if (body.correlationId) envelope.correlationId = body.correlationId;
  if (body.stepName) envelope.stepName = body.stepName;
  return envelope;
}

const str = (value: unknown): string | undefined =>
  typeof value === "string" && value.trim() ? value.trim() : undefined;

/** nui's response envelope to a request, as Brain gives it. */
export function responseTo(
  request: HitlRequestEnvelope,
  status: HitlStatus,
  answers?: Record<string, unknown>,
): HitlResponseEnvelope {
  return {
    schemaVersion: HITL_SCHEMA_VERSION,
    requestId: request.requestId,
    ...(request.correlationId ? { correlationId: request.correlationId } : {}),
    status,
    ...(answers ? { answers } : {}),
    respondedBy: { channel: "brain" },
    respondedAt: new Date().toISOString(),
  };
}

/**
 * The ids of the Brain requests a HITL request becomes: nui's requestId for an approval and the first question,
 * `<requestId>#<n>` for the n-th question of a multi-question request.
 */
export function brainRequestIds(
  request: Pick<HitlRequestEnvelope, "requestId" | "kind" | "payload">,
): string[] {
  if (request.kind === "approval") return [request.requestId];
  return questionsOf(request.kind, request.payload).map((_, i) =>
    i === 0 ? request.requestId : `${request.requestId}#${i + 1}`,
  );
}

/** Asks Brain's clients and resolves with nui's response envelope. Never rejects. */
export async function answerHitl(
  options: Pick<HarnessOptions, "ask" | "permit">,
  at: HitlTurn,
  request: HitlRequestEnvelope,
): Promise<HitlResponseEnvelope> {
  const respond = (status: HitlStatus, answers?: Record<string, unknown>) =>
    responseTo(request, status, answers);
  // The request expires when its envelope says: nui's SDKs and UI show and trust expiresAt. It used to be given up
  // at the session's ask timeout whatever its ttl, a 10 s request waiting a minute, an hour's expired after one.
  const waitMs = Math.max(0, Date.parse(request.expiresAt) - Date.parse(request.createdAt));
  try {
    if (request.kind === "approval") return await approve(options, at, request, respond, waitMs);
    return await ask(options, at, request, respond, waitMs);
  } catch (err) {
    return respond("cancelled", { reason: `Brain could not ask: ${(err as Error).message}` });
  }
}

type Respond = (status: HitlStatus, answers?: Record<string, unknown>) => HitlResponseEnvelope;

async function approve(
  options: Pick<HarnessOptions, "permit">,
  at: HitlTurn,
  request: HitlRequestEnvelope,
  respond: Respond,
  waitMs: number,
): Promise<HitlResponseEnvelope> {
  const p = request.payload;
  const input = p.toolInput;
  const reason = [str(p.title), str(p.message), str(p.description)].filter(Boolean).join(": ");
  const verdict = await options.permit(
    at.turn,
    {
      tool: str(p.toolName) ?? "approval",
      ...(input && typeof input === "object" && !Array.isArray(input)
        ? { arguments: input as Record<string, unknown> }
        : {}),
      ...(reason ? { reason } : {}),
    },
    at.signal,
    // An explicit approval request asks a person unless the session's policy says otherwise.
    { id: request.requestId, unlisted: "ask", waitMs, expiresAt: request.expiresAt },
  );
  if (at.signal.aborted) return respond("cancelled", { reason: whyStopped(at.signal) });
  const answers = {
    approved: verdict.decision === "allow",
    decision: verdict.decision,
    ...(verdict.reason ? { reason: verdict.reason } : {}),
  };
  // No one answered is not a person's no: nui tells them apart (expired, cancelled; declined).
  const status = verdict.decision === "allow" ? "answered" : (verdict.unanswered ?? "declined");
  return respond(status, answers);
}

interface OneQuestion extends Question {
  /** The key of this question's answer in nui's `answers`. */
  key: string;
}

/**
 * nui's question payload as Brain questions, nothing dropped: the request's title and message go with each
 * question, and each keeps its header and its options' descriptions.
 */
export function questionsOf(kind: HitlKind, payload: Record<string, unknown>): OneQuestion[] {
  const title = str(payload.title);
  const message = str(payload.message);
  const shared = { ...(title ? { title } : {}), ...(message ? { message } : {}) };
  const fallback = message ?? title ?? "The agent asks for your input.";
  const listed = Array.isArray(payload.questions) ? payload.questions : [];
  const out: OneQuestion[] = [];
  for (const entry of listed) {
    const parsed = HitlQuestion.safeParse(typeof entry === "string" ? { question: entry } : entry);
    if (!parsed.success) continue;
    const header = str(parsed.data.header);
    const text = str(parsed.data.question) ?? header ?? fallback;
    const options: string[] = [];
    const descriptions: Record<string, string> = {};
    for (const option of parsed.data.options ?? []) {
      const label = typeof option === "string" ? option.trim() : option.label.trim();
      if (!label) continue;
      options.push(label);
      const description = typeof option === "string" ? undefined : str(option.description);
      if (description) descriptions[label] = description;
    }
    const offered = kind !== "freeform" && options.length > 0;
    out.push({
      key: text,
      question: text,
      ...shared,
      ...(header ? { header } : {}),
      ...(offered ? { options } : {}),
      ...(offered && Object.keys(descriptions).length ? { option_descriptions: descriptions } : {}),
    });
  }
  if (out.length === 0) out.push({ key: "answer", question: fallback, ...shared });
  return out;
}

async function ask(
  options: Pick<HarnessOptions, "ask">,
  at: HitlTurn,
  request: HitlRequestEnvelope,
  respond: Respond,
  waitMs: number,
): Promise<HitlResponseEnvelope> {
  const questions = questionsOf(request.kind, request.payload);
  const ids = brainRequestIds(request);
  // All at once, as nui shows a request's questions on one form: its respond() answers them together, and a
  // question asked only after the one before it was answered was left to expire.
  const withdraw = new AbortController();
  // With the turn's reason: its questions' answers say why the turn stopped (a crash is no interrupt).
  const onAbort = () => withdraw.abort(at.signal.reason);
  at.signal.addEventListener("abort", onAbort, { once: true });
  if (at.signal.aborted) onAbort();
  let given: string[];
  // A person's no to any question is the request's `declined`, a client's cancel its `cancelled`, not `expired`:
  // nui's agent tells them apart.
  let ended: "declined" | "cancelled" | undefined;
  const told = (ending: AskEnding) => {
    if (ending.declined) ended = "declined";
    else if (ending.unanswered === "cancelled") ended ??= "cancelled";
  };
  try {
    given = await Promise.all(
      questions.map(({ key: _key, ...question }, i) =>
        options.ask(at.turn, question, withdraw.signal, {
          id: ids[i],
          waitMs,
          expiresAt: request.expiresAt,
          together: ids,
          told,
        }),
      ),
    );
  } catch (err) {
    withdraw.abort(); // the questions asked before one that could not be are not left waiting
    throw err;
  } finally {
    at.signal.removeEventListener("abort", onAbort);
  }
  if (at.signal.aborted) return respond("cancelled", { reason: whyStopped(at.signal) });
  if (ended) return respond(ended);
  if (given.includes("")) return respond("expired");
  return respond("answered", Object.fromEntries(questions.map((q, i) => [q.key, given[i]])));
}
