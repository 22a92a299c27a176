// The request desk of one session: permission requests and questions put to its clients. It logs each request,
// waits for the one answer (a client's, or the fallback when the ask timeout passes or the turn is interrupted)
// and lets exactly one through: the pending index (src/core/pending.ts) decides who answers, the log keeps it.
import { randomUUID } from "node:crypto";
import type { AnswerBody } from "../protocol/api.js";
import type { AnsweredBy, NewEvent, Question, SessionEvent, Unanswered } from "../protocol/events.js";
import { MAX_TIMER_MS, type PermissionDecision } from "../protocol/permissions.js";
import { SessionError } from "./errors.js";
import type { AppendOptions } from "./event-log.js";
import type { AskEnding, HarnessOptions, ToolUse } from "./harness.js";
import type { PendingRequests, RequestKind } from "./pending.js";
import type { PermissionRules } from "./permissions.js";
import { whyStopped } from "./running-turn.js";

export interface DeskParts {
  /** The session's pending index, kept in step with its log. */
  pending: PendingRequests;
  permissions: PermissionRules;
  append(events: NewEvent[], options?: AppendOptions): Promise<SessionEvent[]>;
}

export type Answer = NewEvent & { type: "permission.resolved" | "question.answered" };
/** A client's answer's Idempotency-Key, and who sent it. */
export type ReplyFrom = { key?: string; by?: AnsweredBy };
/** `unanswered`: why no one answered (the deny is the host's fallback, not a person's). */
export type Verdict = { decision: "allow" | "deny"; reason?: string; unanswered?: Unanswered };
/**
 * `id`: the request's own id. `waitMs`: how long this request waits for a client, when it carries its own expiry
 * (nui's HITL `ttlSeconds`); never longer than the session's ask timeout, the server's bound on every ask.
 * `together` (questions only): the ids of every question of the one request this one belongs to (nui's HITL request
 * of several questions), the request's own id first; a client answers them as one (questionsOf).
 */
export type AskOptions = {
  id?: string;
  waitMs?: number;
  /**
   * When the request's asker said it expires (nui's HITL envelope's `expiresAt`): it is given up then, and the log
   * says so, when that is within the session's ask timeout.
   */
  expiresAt?: string;
  together?: readonly string[];
  /** Told how the question ended when its answer is "": a person declined it, or why no one answered. */
  told?: (ending: AskEnding) => void;
};
/**
 * A client's answer as the desk takes it. nui's HITL respond() may say no one answered (its `cancelled`, `expired`):
 * logged as `unanswered`, not as an answer; Brain's own answer body (AnswerBody) lets no client say so.
 */
export type ReplyBody = AnswerBody & { unanswered?: Unanswered };

/** A waiting request's times, as ISO strings: logged at `createdAt`, given up at `expiresAt`. */
export type RequestTimes = { createdAt: string; expiresAt: string };

const waiterKey = (kind: RequestKind, id: string) => `${kind}\u0000${id}`;

/** The kinds a client answers by id alone (reply()): one id names at most one pending request of them. */
const ASKED_KINDS = ["permission.requested", "question.requested"] as const;

/** The policy's two verdicts that need no client: one object each, not one per tool call. */
const ALLOWED: Verdict = Object.freeze({ decision: "allow" });
const DENIED: Verdict = Object.freeze({ decision: "deny", reason: "the session's policy denies it" });

export class RequestDesk {
  /**
   * Turns waiting on a permission or question, by request: woken by the one answer. answer() claims (removes)
   * the waiter when it takes the request, so a waiter still here after its request was taken is orphaned.
   */
  private readonly waiters = new Map<string, (answer: Record<string, unknown>) => void>();
  /**
   * The questions of each request of several being asked, by the request's id (AskOptions.together): whoever raised
   * it (Brain's HITL API, an extension host's hitl_request, a container's NUI_API_URL), nui's one respond() answers all.
   */
  private readonly together = new Map<string, readonly string[]>();
  /** When each request waiting here was logged and when it is given up (its timer), by id: its nui envelope says so. */
  private readonly deadlines = new Map<string, RequestTimes>();

  constructor(private readonly parts: DeskParts) {}

  /** The longest a request waits for a client: the session's ask timeout. */
  get askTimeoutMs(): number {
    return this.parts.permissions.askTimeoutMs;
  }

  /** What a harness asks through (its options' permit, ask, asking and askTimeoutMs), bound to this desk. */
  forHarness(): Pick<HarnessOptions, "permit" | "ask" | "asking" | "askTimeoutMs"> {
    return {
      permit: (turn, use, signal, options) => this.permit(turn, use, signal, options),
      ask: (turn, question, signal, options) => this.ask(turn, question, signal, options),
      asking: (id) => this.asking(id),
      askTimeoutMs: this.askTimeoutMs,
    };
  }

  /**
   * Applies the session's permission policy to a tool use: allow and deny at once; ask logs
   * `permission.requested` and waits for a client's answer, or denies when none comes in time.
   */
  async permit(
    turn: string,
    use: ToolUse,
    signal: AbortSignal,
    /** `id`: the request's id (a client's own, e.g. nui's HITL requestId); `unlisted`: the decision for a tool
     * the policy names in no rule and gives no default for (an explicit approval request asks); `waitMs`: see
     * AskOptions. */
    options: AskOptions & { unlisted?: PermissionDecision } = {},
  ): Promise<Verdict> {
    const decided = this.decided(use.tool, options.unlisted);
    if (decided) return decided;
    const id = options.id ?? `permission-${randomUUID()}`;
    const answer = await this.waitForAnswer(
      "permission.requested",
      { type: "permission.requested", turn, data: { id, ...use } },
      signal,
      (reason, unanswered) => ({
        type: "permission.resolved",
        turn,
        data: { id, decision: "deny", reason, unanswered },
      }),
      options,
    );
    return answer as Verdict;
  }

  /** The policy's verdict on a tool use when it needs no client (allow or deny); undefined when it asks. */
  decided(tool: string, unlisted?: PermissionDecision): Verdict | undefined {
    const decision = this.parts.permissions.decide(tool, unlisted);
    if (decision === "allow") return ALLOWED;
    if (decision === "deny") return DENIED;
    return undefined;
  }

  /** Asks the session's clients a question; resolves with the first answer, or "" when none comes in time. */
  async ask(
    turn: string,
    question: Question,
    signal: AbortSignal,
    options: AskOptions = {},
  ): Promise<string> {
    const id = options.id ?? `question-${randomUUID()}`;
    const group = options.together;
    // Known from before the request is logged until its own question is answered, so a respond() finds them all.
    const leads = group !== undefined && group.length > 1 && group[0] === id && !this.together.has(id);
    if (leads) this.together.set(id, group);
    try {
      const answer = await this.waitForAnswer(
        "question.requested",
        {
          type: "question.requested",
          turn,
          data: {
            id,
            ...question,
            ...(group !== undefined && group.length > 1 ? { request: group[0] } : {}),
          },
        },
        signal,
        (reason, unanswered) => ({
          type: "question.answered",
          turn,
          data: { id, answer: "", reason, unanswered },
        }),
        options,
      );
      const { declined, unanswered } = answer as AskEnding;
      options.told?.({ ...(declined ? { declined } : {}), ...(unanswered ? { unanswered } : {}) });
      return (answer as { answer: string }).answer;
    } finally {
      if (leads && this.together.get(id) === group) this.together.delete(id);
    }
  }

  /** When a request still waiting for its answer was asked and when it will be given up; undefined if it is not. */
  timesOf(requestId: string): RequestTimes | undefined {
    return this.deadlines.get(requestId);
  }

  /**
   * The ids a client's answer to `requestId` answers: every question of a request asked as several (AskOptions
   * .together), else the one. By the request's record only: another request may have an id like `<id>#2` of its own.
   */
  questionsOf(requestId: string): readonly string[] {
    return this.together.get(requestId) ?? [requestId];
  }

  /**
   * Whether a permission request or question with this id is pending or waited on: a new request may not
   * take its id (clients answer by id alone, and one id has one waiter).
   */
  asking(id: string): boolean {
    return ASKED_KINDS.some(
      (kind) => this.parts.pending.has(kind, id) || this.waiters.has(waiterKey(kind, id)),
    );
  }

  /**
   * Answers a pending request (a permission or a question) exactly once. A second answer, or one for an
   * unknown id, is refused.
   */
  async answer(event: Answer): Promise<void> {
    return this.answerAll([event]);
  }

  /**
   * Answers several pending requests as one (the questions of one request, AskOptions.together): all of them, or,
   * when one is not pending (its wait passed, its turn was interrupted, another client answered it), none. Every
   * one is checked and claimed before any is answered, and their answers are logged in one append.
   */
  async answerAll(events: readonly Answer[]): Promise<void> {
    const kinds = events.map(
      (e): RequestKind => (e.type === "permission.resolved" ? "permission.requested" : "question.requested"),
    );
    const gone = events.filter((e, i) => !this.parts.pending.has(kinds[i]!, e.data.id)).map((e) => e.data.id);
    if (gone.length > 0) {
      const none = events.length > 1 ? `; none of the ${events.length} answers was taken` : "";
      throw new SessionError(
        "conflict",
        `no pending ${kinds[0]} with id "${gone[0]}" (answered already, given up, or not asked yet?)${none}`,
      );
    }
    // Claimed now, all of them, woken once the answers are logged: their timeouts or interrupts leave them to us.
    const requests = events.map((e, i) => this.parts.pending.take(kinds[i]!, e.data.id)!);
    const wakes = events.map((e, i) => {
      const key = waiterKey(kinds[i]!, e.data.id);
      const wake = this.waiters.get(key);
      this.waiters.delete(key);
      return wake;
    });
    try {
      await this.parts.append(events.map((e, i) => ({ ...e, turn: requests[i]!.turn }) as NewEvent));
    } catch (err) {
      // Claimed, so no timeout or interrupt will end them now: each gets the fallback (a smaller event the log may
      // still take, e.g. one without an oversized reason), its turn goes on, and the client hears why. The host
      // withdrew the request before its wait passed: `cancelled`, not a person's answer nor an expiry.
      const reason = `the answer could not be logged: ${(err as Error).message}`;
      const unanswered = "cancelled" as const;
      const fallbacks = events.map((e, i) => {
        const given =
          kinds[i] === "permission.requested"
            ? { decision: "deny" as const, reason, unanswered }
            : { answer: "", reason, unanswered };
        return { type: e.type, turn: requests[i]!.turn, data: { id: e.data.id, ...given } } as NewEvent;
      });
      this.parts.append(fallbacks).catch(() => {});
      for (const [i, wake] of wakes.entries()) wake?.(fallbacks[i]!.data as Record<string, unknown>);
      throw err;
    }
    for (const [i, wake] of wakes.entries()) {
      // The key and the author are the clients' record, not part of the verdict the harness gets.
      const { idempotency_key: _, answered_by: __, ...verdict } = events[i]!.data;
      wake?.(verdict);
    }
  }

  /**
   * A client's answer by request id, in whichever shape it came ({decision} or {answer}): checked against the
   * kind of request it answers, then answered exactly once.
   */
  async reply(requestId: string, body: ReplyBody, session: string, from: ReplyFrom = {}): Promise<void> {
    return this.replyAll([[requestId, body]], session, from);
  }

  /** Clients' answers to several requests as one (answerAll), each checked against the kind it answers. */
  async replyAll(
    replies: readonly (readonly [string, ReplyBody])[],
    session: string,
    from: ReplyFrom = {},
  ): Promise<void> {
    const none = replies.length > 1 ? `; none of the ${replies.length} answers was taken` : "";
    return this.answerAll(replies.map(([id, body]) => this.answerEventOf(id, body, session, from, none)));
  }

  /** `none`: what the refusal adds when the request is not pending. */
  private answerEventOf(
    requestId: string,
    body: ReplyBody,
    session: string,
    from: ReplyFrom,
    none: string,
  ): Answer {
    const { key, by } = from;
    const request = this.parts.pending.list().find((r) => r.id === requestId && r.kind !== "tool.call");
    if (!request) {
      throw new SessionError(
        "conflict",
        `no pending permission request or question "${requestId}" in session ${session} (answered already, or never asked)${none}`,
      );
    }
    const reason = {
      ...(body.reason ? { reason: body.reason } : {}),
      ...(key !== undefined ? { idempotency_key: key } : {}),
      ...(by ? { answered_by: by } : {}),
      ...(body.unanswered ? { unanswered: body.unanswered } : {}),
    };
    if (request.kind === "permission.requested") {
      if (!("decision" in body)) {
        throw new SessionError(
          "bad_request",
          `"${requestId}" is a permission request: answer {"decision": "allow" | "deny"}`,
          "decision",
        );
      }
      return { type: "permission.resolved", data: { id: requestId, decision: body.decision, ...reason } };
    }
    if (!("answer" in body)) {
      throw new SessionError(
        "bad_request",
        `"${requestId}" is a question: answer {"answer": "..."}`,
        "answer",
      );
    }
    const declined = "declined" in body && body.declined ? { declined: true as const } : {};
    // A no with an answer would reach the harness as the answer, and every client as a refusal.
    if (declined.declined && body.answer !== "") {
      throw new SessionError(
        "bad_request",
        `"${requestId}" is declined and answered at once: send {"answer": "", "declined": true} to decline it, or drop "declined" to answer it`,
        "declined",
      );
    }
    return {
      type: "question.answered",
      data: { id: requestId, answer: body.answer, ...reason, ...declined },
    };
  }

  /** Appends an answer if, and only if, the request is still pending. Not awaited: order is kept by the log. */
  resolve(kind: RequestKind, id: string, answer: NewEvent, options?: AppendOptions): void {
    if (!this.parts.pending.take(kind, id)) return;
    this.parts.append([answer], options).catch(() => {});
  }

  /**
   * Logs a request and waits for its answer: from a client (answer()), or the fallback when the ask timeout
   * passes or the turn is interrupted. Whichever comes first is the one answer logged.
   */
  private async waitForAnswer(
    kind: "permission.requested" | "question.requested",
    request: NewEvent & { data: { id: string } },
    signal: AbortSignal,
    fallback: (reason: string, unanswered: Unanswered) => NewEvent,
    { waitMs = this.askTimeoutMs, expiresAt: asked }: Pick<AskOptions, "waitMs" | "expiresAt">,
  ): Promise<Record<string, unknown>> {
    const { id } = request.data;
    // A second request under a pending id would take over the first one's waiter and leave that turn waiting
    // for good; the one who chose the id (a harness, nui's HITL API) hears why.
    if (this.asking(id)) {
      throw new SessionError(
        "conflict",
        `a permission request or question with id "${id}" is already pending in this session; give each request its own id`,
        "requestId",
      );
    }
    const key = waiterKey(kind, id);
    let wake!: (answer: Record<string, unknown>) => void;
    const answered = new Promise<Record<string, unknown>>((resolve) => {
      wake = resolve;
    });
    this.waiters.set(key, wake);
    const timeoutMs = Math.min(waitMs, this.askTimeoutMs, MAX_TIMER_MS);
    // Fixed before the request is logged, and logged with it: a read of the stored log gives the times the desk does.
    const latest = Date.now() + timeoutMs;
    const askedAt = Date.parse(asked ?? "");
    const expiresAt = new Date(Math.min(Number.isFinite(askedAt) ? askedAt : latest, latest)).toISOString();
    let timer: NodeJS.Timeout | undefined;
    let times: RequestTimes | undefined;
    const giveUp = (reason: string, unanswered: Unanswered) => {
      const event = fallback(reason, unanswered);
      if (this.parts.pending.take(kind, id)) {
        this.parts.append([event]).catch(() => {});
        wake(event.data as Record<string, unknown>);
        // Taken without an answer() claiming this waiter (or claimed by nobody): no one else will wake it, and a
        // turn must settle on an interrupt whatever became of its request.
      } else if (this.waiters.get(key) === wake) wake(event.data as Record<string, unknown>);
    };
    const onAbort = () => giveUp(whyStopped(signal), "cancelled");
    try {
      const logging = this.parts.append([
        { ...request, data: { ...request.data, expires_at: expiresAt } } as NewEvent,
      ]);
      // Pending from the moment it is sent, so answerable while its write is in flight: an interrupt made before
      // then (or meanwhile) gives it up now, and an answer sent after that interrupt was acknowledged is refused.
      signal.addEventListener("abort", onAbort, { once: true });
      if (signal.aborted) onAbort();
      const [logged] = await logging;
      times = { createdAt: logged?.ts ?? new Date().toISOString(), expiresAt };
      this.deadlines.set(id, times);
      timer = setTimeout(
        () => giveUp(`no client answered within ${timeoutMs / 1000} s`, "expired"),
        Math.max(0, Date.parse(expiresAt) - Date.now()),
      );
      return await answered;
    } finally {
      clearTimeout(timer);
      signal.removeEventListener("abort", onAbort);
      if (this.waiters.get(key) === wake) this.waiters.delete(key);
      if (times !== undefined && this.deadlines.get(id) === times) this.deadlines.delete(id);
    }
  }
}
