// nui's HITL REST API on the daemon (/api/hitl/requests): what NUI_API_URL promises extensions. A request made
// here becomes a Brain permission request or question of the session's running turn (through the same
// HitlDesk the nui harnesses use), and every pending Brain request can be listed, read, awaited and answered
// in nui's envelopes, whichever harness asked it. Answers go through Session.answer: the first one wins.
import type { PendingRequest } from "../../core/pending.js";
import type { Session } from "../../core/session.js";
import { HitlDesk, HitlRefusal } from "../../harnesses/nui/hitl-desk.js";
import type { ApiErrorCode } from "../../protocol/api.js";
import type { SessionEvent } from "../../protocol/events.js";
import type {
  HitlCreateBody,
  HitlRequestEnvelope,
  HitlRespondBody,
  HitlResponseEnvelope,
} from "../../protocol/nui/hitl.js";
import { ApiError, notFound } from "../errors.js";
import type { Caller, SessionService } from "../sessions.js";
import type { FeedHub } from "../sse/hub.js";
import { TenantBound } from "../tenant-bound.js";
import { type Answerable, answerOf, isAnswerable, RequestAnswers, requestEnvelopeOf } from "./envelopes.js";
import { answeredInLog, answerId, HITL_LOOKBACK_EVENTS, loggedAfter, recentInLog } from "./log-lookup.js";

export { HITL_LOOKBACK_EVENTS };

/** A desk's refusal by its status, as nui's own API answers it: 429 for too many requests waiting, not a 400. */
const REFUSALS: Record<number, ApiErrorCode> = { 409: "conflict", 429: "limit_reached" };

interface Found {
  session: Session;
  envelope: HitlRequestEnvelope;
}

export class HitlService {
  /**
   * By the Session itself, not its id: a session closed and opened again is a new Session, and a desk made for
   * the old one would still ask through it (a request made then was refused: "no run is working").
   */
  private readonly desks = new WeakMap<Session, HitlDesk>();

  constructor(
    private readonly sessions: SessionService,
    private readonly hub: FeedHub,
    /** Waits one tenant may hold at once (hitlWaits): each holds a socket and, for some, a listener of its session. */
    private readonly waits: TenantBound = hitlWaits(),
  ) {}

  async create(caller: Caller, body: HitlCreateBody): Promise<HitlRequestEnvelope> {
    const session = await this.sessionFor(caller, body.sessionId, body.runId);
    // The request goes into the session's log, as a prompt does: refused with it once the log is at its bound.
    await this.sessions.brain.logBound.admit(session.id, async () => {});
    try {
      return this.desk(session).create(body);
    } catch (err) {
      if (err instanceof HitlRefusal) throw new ApiError(REFUSALS[err.status] ?? "bad_request", err.message);
      throw err;
    }
  }

  async list(caller: Caller, filter: { sessionId?: string; runId?: string }): Promise<HitlRequestEnvelope[]> {
    const out: HitlRequestEnvelope[] = [];
    for (const session of this.sessions.openSessions(caller)) {
      if (filter.sessionId && session.id !== filter.sessionId) continue;
      const pending = session.pendingRequests();
      // A request's second and later questions are its own envelope's, listed once with all of them.
      const more = new Set(pending.flatMap((r) => session.desk.questionsOf(r.id).slice(1)));
      for (const request of pending) {
        if (!isAnswerable(request) || more.has(request.id)) continue;
        if (filter.runId && request.turn !== filter.runId) continue;
        out.push(this.fromDesk(session, request.id) ?? this.envelopeOf(session, request));
      }
    }
    return out;
  }

  /** The request pending in `sessionId`, or in the caller's one session that has it pending (409 when several do). */
  async get(caller: Caller, requestId: string, sessionId?: string): Promise<HitlRequestEnvelope> {
    const found = this.find(caller, requestId, sessionId);
    if (!found) throw notFound(`no HITL request "${requestId}" in ${sessionsNamed(sessionId)}`);
    return found.envelope;
  }

  /**
   * Resolves with the response once the request is answered (at once if it was); in one of the tenant's places
   * until then, or until its client stops waiting.
   */
  async wait(
    caller: Caller,
    requestId: string,
    signal: AbortSignal,
    sessionId?: string,
  ): Promise<HitlResponseEnvelope> {
    const release = this.waits.take(caller.tenant);
    try {
      return await untilAborted(this.answerTo(caller, requestId, signal, sessionId), signal);
    } finally {
      release();
    }
  }

  private async answerTo(
    caller: Caller,
    requestId: string,
    signal: AbortSignal,
    sessionId: string | undefined,
  ): Promise<HitlResponseEnvelope> {
    const found = this.find(caller, requestId, sessionId);
    for (const session of found ? [found.session] : this.openSessions(caller, sessionId)) {
      const waiting = this.desks.get(session)?.wait(requestId);
      if (waiting) return waiting;
    }
    if (found) return this.answerFromLog(found.session, this.answersTo(found.session, requestId), signal);
    for (const session of this.openSessions(caller, sessionId)) {
      const answered = await answeredInLog(session.log, requestId);
      if (answered) return answered;
    }
    throw notFound(
      `no HITL request "${requestId}" in your sessions (nor answered in their last ${HITL_LOOKBACK_EVENTS} events)`,
    );
  }

  /** nui's respond(): answers the Brain request by id, every question of it or none; 409 once it is answered. */
  async respond(
    caller: Caller,
    requestId: string,
    body: HitlRespondBody,
    sessionId?: string,
  ): Promise<HitlResponseEnvelope> {
    const sessions = await this.answering(caller, sessionId);
    // Every question of the request, as nui's respond() answers them all, whoever raised it (this API, an
    // extension host's hitl_request, a container's NUI_API_URL): the session's desk knows which they are.
    const asking = sessions.flatMap((session) => {
      const ids = session.desk.questionsOf(requestId);
      const pending = session.pendingRequests().filter((r) => ids.includes(r.id) && isAnswerable(r));
      return pending.length > 0 ? [{ session, ids, pending }] : [];
    });
    // Ids are the askers' (a model's tool-call id, an extension's): one answer must not go to a guessed session.
    if (asking.length > 1)
      throw pendingInSeveral(
        requestId,
        asking.map((a) => a.session.id),
      );
    for (const { session, ids, pending } of asking) {
      const requests = ids.map((id) => pending.find((r): r is Answerable => r.id === id));
      const gone = ids.filter((_, i) => !requests[i]);
      if (gone.length > 0) {
        throw new ApiError(
          "conflict",
          `HITL request "${requestId}" cannot be answered whole: its question${gone.length > 1 ? "s" : ""} ${gone.map((id) => `"${id}"`).join(", ")} ${gone.length > 1 ? "are" : "is"} no longer pending (given up or answered); none of its answers was taken: wait for its response (GET /api/hitl/requests/${requestId}/wait)`,
        );
      }
      // Every answer read before any is given: a body refused for one question answers none of them.
      const answers = (requests as Answerable[]).map((r) => answerOf(r, body, ids.length > 1));
      const gather = new RequestAnswers(requestId, keysOf(requests as Answerable[]));
      // The answers are appended after this seq: however much else became durable with them or since, they are found.
      const before = session.log.lastSeq;
      // An answer, not a command: it works while another client controls the session. All claimed, then logged,
      // by the one path every answer takes (SessionService.answer), so its checks are this one's too.
      await this.sessions.answer(
        caller,
        session.id,
        ids.map((id, i) => [id, answers[i]!] as const),
        { command: false },
      );
      const logged = await loggedAfter(session.log, before, (e) => gather.see(e));
      if (logged)
        return {
          ...logged,
          ...(body.respondedBy?.channel ? { respondedBy: { channel: body.respondedBy.channel } } : {}),
        };
      return {
        schemaVersion: "1",
        requestId,
        status: body.status ?? "answered",
        respondedAt: new Date().toISOString(),
      };
    }
    for (const session of sessions) {
      const logged = await recentInLog(session.log, (e) => (answerId(e) === requestId ? e : undefined));
      if (logged) throw new ApiError("conflict", `HITL request "${requestId}" ${howEnded(logged)}`);
    }
    throw notFound(
      `no pending HITL request "${requestId}" in ${sessionsNamed(sessionId)} (nor answered in their last ${HITL_LOOKBACK_EVENTS} events)`,
    );
  }

  /**
   * The one session of the caller's (or `sessionId`, if named) with the request pending. Ids are the askers' (a
   * model's tool-call id, an extension's): pending in several, which one was meant is not guessed.
   */
  private find(caller: Caller, requestId: string, sessionId: string | undefined): Found | undefined {
    const found = this.openSessions(caller, sessionId).flatMap((session): Found[] => {
      const fromDesk = this.fromDesk(session, requestId);
      if (fromDesk) return [{ session, envelope: fromDesk }];
      const request = session.pendingRequests().find((r) => r.id === requestId);
      return request && isAnswerable(request)
        ? [{ session, envelope: this.envelopeOf(session, request) }]
        : [];
    });
    if (found.length > 1)
      throw pendingInSeveral(
        requestId,
        found.map((f) => f.session.id),
      );
    return found[0];
  }

  /**
   * The sessions an answer may be for: the caller's open here, or the one it names, opened here when it is not
   * closed and no node has it open (its owner died), as /v1 answers open it. Left unopened, the answer to a request
   * pending in its log was a 404; opened, the turn its owner left is closed out and the answer is refused truthfully.
   */
  private async answering(caller: Caller, sessionId: string | undefined): Promise<Session[]> {
    // An answer that comes while a close or delete of its session is under way is taken as after it, as a /v1
    // answer is (SessionService.drive): the closed session stays registered, its log closed, until its record says
    // closed (its log read for the answer was a 500), and a named one being deleted was opened again (409).
    const ids = sessionId ? [sessionId] : this.openSessions(caller, undefined).map((s) => s.id);
    await Promise.all(ids.map((id) => this.sessions.brain.closeDone(id)));
    const open = this.openSessions(caller, sessionId);
    if (!sessionId || open.length > 0) return open;
    // Another tenant's, or none: 404 as any read of it. A lease another node still holds: 409 naming it.
    if ((await this.sessions.record(caller, sessionId)).status === "closed") return [];
    return [await this.sessions.live(caller, sessionId)];
  }

  private openSessions(caller: Caller, sessionId: string | undefined): Session[] {
    return this.sessions.openSessions(caller).filter((s) => !sessionId || s.id === sessionId);
  }

  /** A pending Brain request in nui's envelope, with its real times: its wait is the session's desk's. */
  private envelopeOf(session: Session, request: PendingRequest): HitlRequestEnvelope {
    const more = session.desk.questionsOf(request.id).slice(1);
    const pending = more.length > 0 ? session.pendingRequests().filter((r) => more.includes(r.id)) : [];
    return requestEnvelopeOf(session.id, request, session.desk.timesOf(request.id), pending);
  }

  /** A request made through this API, as its maker sent it but for what the session's log redacts. */
  private fromDesk(session: Session, requestId: string): HitlRequestEnvelope | undefined {
    const envelope = this.desks.get(session)?.get(requestId);
    return envelope && session.redactor.redactDeep(envelope);
  }

  /** The session a create body names; or, without one, the caller's one session running the given turn. */
  private async sessionFor(
    caller: Caller,
    sessionId: string | undefined,
    runId: string | undefined,
  ): Promise<Session> {
    if (sessionId) return this.sessions.live(caller, sessionId);
    const running = this.sessions
      .openSessions(caller)
      .filter((s) => s.askingTurn && (!runId || s.askingTurn.id === runId));
    if (running.length === 1) return running[0]!;
    throw new ApiError(
      "bad_request",
      'field "sessionId": required (NUI_SESSION_ID) unless exactly one of your sessions is running a turn',
      "sessionId",
    );
  }

  private desk(session: Session): HitlDesk {
    let desk = this.desks.get(session);
    if (!desk) {
      desk = new HitlDesk(
        session.id,
        session.desk.forHarness(),
        // A request waits while its turn runs: the turn's own signal ends it when the harness is done with the
        // turn (or it is interrupted), so none is made, or left waiting, once its turn.settled may be written.
        (runId) => {
          const turn = session.askingTurn;
          if (!turn || (runId && runId !== turn.id)) return undefined;
          return { runId: turn.id, turn: turn.id, signal: turn.signal };
        },
      );
      this.desks.set(session, desk);
    }
    return desk;
  }

  /** What gathers the answers to a pending request: every question of it (RequestDesk.questionsOf). */
  private answersTo(session: Session, requestId: string): RequestAnswers {
    const ids = session.desk.questionsOf(requestId);
    const pending = session.pendingRequests();
    return new RequestAnswers(requestId, keysOf(ids.map((id) => pending.find((r) => r.id === id) ?? { id })));
  }

  private answerFromLog(
    session: Session,
    gather: RequestAnswers,
    signal: AbortSignal,
  ): Promise<HitlResponseEnvelope> {
    return new Promise((resolve, reject) => {
      const finish = (response: HitlResponseEnvelope | undefined, error?: Error) => {
        unlisten();
        signal.removeEventListener("abort", onAbort);
        if (response) resolve(response);
        else reject(error);
      };
      const onAbort = () => finish(undefined, stoppedWaiting());
      const unlisten = this.hub.listen(session.id, {
        events: (batch) => {
          for (const event of batch) {
            const response = gather.see(event);
            if (response) return finish(response);
          }
        },
        attached: () => {},
        ended: () => finish(undefined, notFound(`session ${session.id} was deleted`)),
      });
      signal.addEventListener("abort", onAbort, { once: true });
      // Answered between the lookup and the subscription: it is in the log.
      recentInLog(session.log, (e) => gather.see(e)).then(
        (response) => response && finish(response),
        (err: unknown) => finish(undefined, err as Error),
      );
    });
  }
}

/**
 * HITL waits one tenant may hold at once. A wait lasts until its request is answered, and one for a Brain
 * request listens to its session's every batch: without a bound, one tenant's thousands of waits on one request
 * held as many sockets, and made each of that session's batches cost the daemon's loop thousands of calls.
 */
export const HITL_WAITS_PER_TENANT = 256;

export function hitlWaits(maxPerTenant = HITL_WAITS_PER_TENANT): TenantBound {
  return new TenantBound(
    maxPerTenant,
    (tenant, held) =>
      `tenant "${tenant}" has ${held} HITL waits open on this daemon, its limit: stop waiting on one and try again, or raise limits.hitl_waits_per_tenant in brain.config.json`,
  );
}

/** The 409 of a request id pending in several of the caller's sessions, named by none. */
export function pendingInSeveral(requestId: string, sessions: string[]): ApiError {
  return new ApiError(
    "conflict",
    `HITL request "${requestId}" is pending in ${sessions.length} of your sessions (${sessions.join(", ")}); none was read or answered: name the one you mean with ?sessionId=<session id>`,
  );
}

const sessionsNamed = (sessionId: string | undefined) =>
  sessionId ? `your session ${sessionId}` : "your sessions";

const stoppedWaiting = () => new ApiError("conflict", "the client stopped waiting");

/** `promise`, or a refusal as soon as `signal` aborts (the client went away: its place is given back then). */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(stoppedWaiting());
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(stoppedWaiting());
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

/** How the log ended a request: answered, or given up unanswered (its turn ended, its host stopped) and why. */
function howEnded(answer: SessionEvent): string {
  const data = answer.data as { unanswered?: string; reason?: string };
  if (!data.unanswered) return "was answered already";
  return `was given up unanswered (${data.unanswered}${data.reason ? `: ${data.reason}` : ""}); no answer can reach it now`;
}

/** Each question's key in nui's answers, by its Brain id: its question's text, as nui keys a request's questions. */
function keysOf(requests: readonly { id: string; data?: Record<string, unknown> }[]): Map<string, string> {
  return new Map(requests.map((r) => [r.id, typeof r.data?.question === "string" ? r.data.question : r.id]));
}
