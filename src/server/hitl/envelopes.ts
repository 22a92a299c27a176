// Brain's pending permission requests and questions in nui's HITL envelopes, and nui's answers back as Brain's:
// so a nui-style client (its UI, its SDK's respond()) can see and answer any request a Brain session asks,
// whichever harness asked it.
import type { PendingRequest } from "../../core/pending.js";
import type { ReplyBody, RequestTimes } from "../../core/request-desk.js";
import type { Question, SessionEvent } from "../../protocol/events.js";
import {
  HITL_SCHEMA_VERSION,
  type HitlRequestEnvelope,
  type HitlRespondBody,
  type HitlResponseEnvelope,
} from "../../protocol/nui/hitl.js";
import { ApiError } from "../errors.js";

type AnswerableKind = Extract<PendingRequest["kind"], "permission.requested" | "question.requested">;
/** A pending permission request or question: what a client answers. */
export type Answerable = PendingRequest & { kind: AnswerableKind };

export function isAnswerable(request: PendingRequest): request is Answerable {
  return request.kind === "permission.requested" || request.kind === "question.requested";
}

/**
 * A pending Brain request as nui's request envelope (`runId` is the Brain turn). `times`: when it was asked and
 * when its wait ends (the session's desk knows them while it waits; "" when not known). `more`: the further
 * questions of a request of several (RequestDesk.questionsOf), listed in its payload after its own.
 */
export function requestEnvelopeOf(
  session: string,
  request: PendingRequest,
  times: RequestTimes = { createdAt: "", expiresAt: "" },
  more: readonly PendingRequest[] = [],
): HitlRequestEnvelope {
  const { createdAt, expiresAt } = times;
  const lastsMs = Date.parse(expiresAt) - Date.parse(createdAt);
  const d = request.data as Record<string, unknown>;
  const approval = request.kind === "permission.requested";
  const payload: Record<string, unknown> = approval
    ? {
        title: "Approve tool call",
        message: typeof d.reason === "string" ? d.reason : `Allow tool "${String(d.tool)}"?`,
        toolName: d.tool,
        toolInput: d.arguments ?? {},
      }
    : questionPayload(request.data as Question);
  if (!approval && more.length > 0)
    payload.questions = [request, ...more].flatMap((q) => questionPayload(q.data as Question).questions);
  return {
    schemaVersion: HITL_SCHEMA_VERSION,
    requestId: request.id,
    sessionId: session,
    ...(request.turn ? { runId: request.turn } : {}),
    kind: approval ? "approval" : "question",
    payload,
    ttlSeconds: Number.isFinite(lastsMs) ? Math.max(0, Math.ceil(lastsMs / 1000)) : 0,
    status: "delivered",
    createdAt,
    expiresAt,
  };
}

/** A Brain question as nui's question payload: title, message, header and option descriptions included. */
function questionPayload(q: Question): Record<string, unknown> & { questions: unknown[] } {
  const descriptions = q.option_descriptions ?? {};
  const options = q.options?.map((label) =>
    descriptions[label] ? { label, description: descriptions[label] } : { label },
  );
  return {
    ...(q.title ? { title: q.title } : {}),
    message: q.message ?? q.question,
    questions: [
      { question: q.question, ...(q.header ? { header: q.header } : {}), ...(options ? { options } : {}) },
    ],
  };
}

/** The statuses a client's respond() may send: the rest are the host's (pending, delivered, expired). */
const CLIENT_STATUSES = '"answered", "declined" or "cancelled"';

/**
 * nui's respond() body as the Brain answer to `request`. `several`: the request is one question of several, each
 * answered under its own question (nui's answers are keyed so): no other key may stand in for its answer.
 */
export function answerOf(request: Answerable, body: HitlRespondBody, several = false): ReplyBody {
  const answers = body.answers ?? {};
  const note =
    typeof answers.message === "string"
      ? answers.message
      : typeof answers.reason === "string"
        ? answers.reason
        : undefined;
  // `expired` is the host's own verdict, logged when the request's wait passes: a client saying so would put a
  // timeout that never happened in the log (and a wait the host still runs).
  if (body.status === "pending" || body.status === "delivered" || body.status === "expired") {
    const why =
      body.status === "expired" ? "is the host's verdict when a request's wait passes" : "is not an answer";
    throw new ApiError(
      "bad_request",
      `field "status": "${body.status}" ${why}; a client sends ${CLIENT_STATUSES} (cancelled to withdraw it)`,
      "status",
    );
  }
  const refused = body.status === "declined" || body.status === "cancelled";
  // Not a person's no: the request was withdrawn, as nui's status says, and its log says so.
  const unanswered = body.status === "cancelled" ? { unanswered: body.status } : {};
  if (request.kind === "permission.requested") {
    // Only a clear yes allows: nui's "answered" status (its approve), unless the answers say no. An approval
    // that is not a boolean or a decision that is neither word is refused rather than read as a yes.
    if (answers.approved !== undefined && typeof answers.approved !== "boolean") {
      throw new ApiError(
        "bad_request",
        `field "answers.approved": must be true or false, not ${JSON.stringify(answers.approved)}`,
        "answers.approved",
      );
    }
    if (answers.decision !== undefined && answers.decision !== "allow" && answers.decision !== "deny") {
      throw new ApiError(
        "bad_request",
        `field "answers.decision": must be "allow" or "deny", not ${JSON.stringify(answers.decision)}`,
        "answers.decision",
      );
    }
    const allow = !refused && answers.approved !== false && answers.decision !== "deny";
    const reason =
      note ?? (allow ? "approved through the HITL API" : `${body.status ?? "declined"} through the HITL API`);
    return allow ? { decision: "allow", reason } : { decision: "deny", reason, ...unanswered };
  }
  if (refused) {
    const reason = `${body.status} through the HITL API`;
    return { answer: "", reason, ...(body.status === "declined" ? { declined: true as const } : unanswered) };
  }
  const question = String((request.data as { question?: unknown }).question ?? "");
  // By its question first: a request of several questions is answered with one answers object keyed by them.
  // Of several questions, the first string or `answer` may be another question's answer: only its own key answers it.
  const picked = several
    ? answers[question]
    : (answers[question] ?? answers.answer ?? Object.values(answers).find((v) => typeof v === "string"));
  // Nothing to log as what the person said: "{}" was logged, and the harness told they had answered it.
  if (picked === undefined || picked === null) {
    const key = `answers[${JSON.stringify(question)}]`;
    const fix = several
      ? ` of this request of several questions; send each question's answer under its own question, as ${key}, or status "declined" to refuse them`
      : `; send it as ${key} (or answers.answer), or status "declined" to refuse it`;
    throw new ApiError(
      "bad_request",
      `field "answers": no answer to question ${JSON.stringify(question)}${fix}`,
      "answers",
    );
  }
  return { answer: typeof picked === "string" ? picked : JSON.stringify(picked) };
}

/** The answer event in the log as nui's response envelope. */
export function responseEnvelopeOf(event: SessionEvent): HitlResponseEnvelope | undefined {
  const base = {
    schemaVersion: HITL_SCHEMA_VERSION,
    respondedBy: { channel: "brain" },
    respondedAt: event.ts,
  };
  if (event.type === "permission.resolved") {
    const allow = event.data.decision === "allow";
    return {
      ...base,
      requestId: event.data.id,
      // No one answered (the wait passed, the turn ended) is not a person's no.
      status: allow ? "answered" : (event.data.unanswered ?? "declined"),
      answers: {
        approved: allow,
        decision: event.data.decision,
        ...(event.data.reason ? { message: event.data.reason } : {}),
      },
    };
  }
  if (event.type === "question.answered") {
    const { unanswered, declined } = event.data;
    const answered = !unanswered && !declined && (event.data.answer !== "" || !event.data.reason);
    return {
      ...base,
      requestId: event.data.id,
      // Without `unanswered` or `declined` (a log written before them): an empty answer with a reason is none.
      status: answered ? "answered" : declined ? "declined" : (unanswered ?? "expired"),
      answers: answered ? { answer: event.data.answer } : { reason: event.data.reason },
    };
  }
  return undefined;
}

/**
 * Gathers the answers to a request's questions from log events (`see` each), and gives nui's response envelope once
 * every one is answered: `answers` keyed by question as nui's own envelopes key them. `keys`: each question's key, by
 * its Brain id (the request's own id first); one question is its answer event's envelope.
 */
export class RequestAnswers {
  private readonly seen = new Map<string, SessionEvent>();

  constructor(
    private readonly requestId: string,
    private readonly keys: ReadonlyMap<string, string>,
  ) {}

  see(event: SessionEvent): HitlResponseEnvelope | undefined {
    const response = responseEnvelopeOf(event);
    if (!response || !this.keys.has(response.requestId)) return undefined;
    this.seen.set(response.requestId, event);
    if (this.seen.size < this.keys.size) return undefined;
    const events = [...this.keys.keys()].map((id) => this.seen.get(id)!);
    if (events.length === 1) return responseEnvelopeOf(events[0]!);
    const responses = events.map((e) => responseEnvelopeOf(e)!);
    const last = responses.reduce((a, b) => (a.respondedAt >= b.respondedAt ? a : b));
    // One question not answered (its wait passed, the turn ended, it was refused) is the request's answer.
    const unanswered = responses.find((r) => r.status !== "answered");
    if (unanswered) return { ...unanswered, requestId: this.requestId, respondedAt: last.respondedAt };
    const answers = Object.fromEntries(
      events.map((e) => [
        this.keys.get((e.data as { id: string }).id)!,
        (e.data as { answer?: string }).answer,
      ]),
    );
    return { ...last, requestId: this.requestId, answers };
  }
}
