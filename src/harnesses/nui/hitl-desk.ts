// One session's human-in-the-loop requests from its nui agent, whichever way they arrive: created through the
// REST API under NUI_API_URL (nui's SDK: create, then wait), or raised as a `hitl_request` event with an id
// Brain has not seen (answered over the protocol when the transport can carry it). Each request is asked once.
import type { HarnessOptions } from "../../core/harness.js";
import type { HitlCreateBody, HitlRequestEnvelope, HitlResponseEnvelope } from "../../protocol/nui/hitl.js";
import { answerHitl, brainRequestIds, type HitlTurn, requestEnvelope, responseTo } from "./hitl-bridge.js";

/**
 * Unanswered requests one desk holds at once. nui's SDKs wait for each answer before the next request; an agent
 * that makes requests without waiting would otherwise have Brain hold every one (up to 1 MiB each) without end.
 */
export const MAX_UNANSWERED_HITL = 64;
/** Answered requests kept for GET and a late wait, the oldest let go first: a session may ask for ever. */
export const MAX_ANSWERED_HITL = 256;
/**
 * Questions one request may list in `payload.questions`. Each is a Brain question, all asked at once, and
 * each new request's ids are checked against every unanswered one's: a 1 MiB body lists some 200 000.
 */
export const MAX_HITL_QUESTIONS = 64;

export interface HitlRun extends HitlTurn {
  runId: string;
}

interface Entry {
  envelope: HitlRequestEnvelope;
  /** The Brain request ids it becomes (brainRequestIds), made once. */
  ids: string[];
  response: Promise<HitlResponseEnvelope>;
  answered?: HitlResponseEnvelope;
  /** Raised as a `hitl_request` event, its answer carried back over the protocol (not made through the API). */
  overProtocol?: boolean;
}

/** A refusal the REST API turns into an HTTP status with a message. */
export class HitlRefusal extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export class HitlDesk {
  private readonly requests = new Map<string, Entry>();
  /** Answered requests' ids, oldest first. */
  private readonly answeredIds: string[] = [];

  constructor(
    readonly sessionId: string,
    private readonly options: Pick<HarnessOptions, "ask" | "permit" | "asking" | "askTimeoutMs">,
    /** The run a request belongs to: by id, or the one running when the request names none. */
    private readonly runFor: (runId: string | undefined) => HitlRun | undefined,
  ) {}

  /** Whether `runId` is this session's running run. */
  runs(runId: string): boolean {
    return this.runFor(runId)?.runId === runId;
  }

  has(requestId: string): boolean {
    return this.requests.has(requestId);
  }

  /** `POST /api/hitl/requests`: asks Brain's clients and returns nui's request envelope at once. */
  create(body: HitlCreateBody): HitlRequestEnvelope {
    const run = this.runFor(body.runId);
    if (!run) {
      throw new HitlRefusal(
        409,
        body.runId
          ? `run "${body.runId}" is not running in session ${this.sessionId}; HITL requests are made while a run works`
          : `no run is working in session ${this.sessionId}; HITL requests are made while a run works`,
      );
    }
    const known = body.requestId ? this.requests.get(body.requestId) : undefined;
    if (known) {
      if (!known.answered) return known.envelope;
      throw new HitlRefusal(409, `HITL request "${body.requestId}" exists already and was answered`);
    }
    const crowded = this.crowded();
    if (crowded !== undefined) throw new HitlRefusal(429, crowded);
    const tooMany = tooManyQuestions(body.kind ?? "question", body.payload);
    if (tooMany !== undefined) throw new HitlRefusal(400, tooMany);
    const envelope = requestEnvelope(body, this.defaults(run));
    const ids = brainRequestIds(envelope);
    const taken = this.takenId(ids);
    if (taken !== undefined) throw new HitlRefusal(409, taken);
    return this.open(envelope, ids, run).envelope;
  }

  /**
   * Why a new request may not have its id: one of the Brain request ids it would become (its requestId, and
   * `<requestId>#<n>` for further questions) is pending in the session or will be asked by an unanswered request
   * of this desk. A second request under a pending id would take over the first one's wait.
   */
  private takenId(ids: string[]): string | undefined {
    const unanswered = new Set<string>();
    for (const entry of this.requests.values())
      if (!entry.answered) for (const id of entry.ids) unanswered.add(id);
    const clash = ids.find((id) => this.options.asking?.(id)) ?? ids.find((id) => unanswered.has(id));
    if (clash === undefined) return undefined;
    return `a permission request or question with id "${clash}" is already pending in session ${this.sessionId}; choose another requestId`;
  }

  /** `GET /api/hitl/requests/:id/wait`. */
  wait(requestId: string): Promise<HitlResponseEnvelope> | undefined {
    return this.requests.get(requestId)?.response;
  }

  get(requestId: string): HitlRequestEnvelope | undefined {
    return this.requests.get(requestId)?.envelope;
  }

  pending(runId?: string): HitlRequestEnvelope[] {
    return [...this.requests.values()]
      .filter((entry) => !entry.answered && (!runId || entry.envelope.runId === runId))
      .map((entry) => entry.envelope);
  }

  /**
   * A `hitl_request` event. One Brain already knows (made through the REST API, or raised before and still
   * waiting) is only a notice; a new one is asked, and `deliver` carries the answer back over the protocol. One
   * raised again after its answer went back is refused (cancelled, saying why), never left without an answer.
   */
  fromEvent(
    event: { requestId: string; kind: string; payload: Record<string, unknown> },
    run: HitlRun,
    deliver: (response: HitlResponseEnvelope) => void,
  ): void {
    const known = this.requests.get(event.requestId);
    if (known && !(known.overProtocol && known.answered)) return;
    const kind = event.kind === "approval" || event.kind === "freeform" ? event.kind : "question";
    const envelope = requestEnvelope(
      { requestId: event.requestId, kind, payload: event.payload },
      this.defaults(run),
    );
    // A request asked over the protocol and answered already: the host waits for an answer that would never come.
    const reused = known
      ? `HITL request id "${event.requestId}" was asked and answered already in session ${this.sessionId}; give each request an id of its own`
      : undefined;
    const refused = reused ?? this.crowded() ?? tooManyQuestions(kind, event.payload);
    const ids = refused === undefined ? brainRequestIds(envelope) : [];
    const taken = refused ?? this.takenId(ids);
    // Not recorded: the id stays the pending request's, and the agent hears why its request was not asked.
    if (taken !== undefined) return deliver(responseTo(envelope, "cancelled", { reason: taken }));
    const entry = this.open(envelope, ids, run);
    entry.overProtocol = true;
    void entry.response.then(deliver);
  }

  /** What a new request's envelope takes from the session: its run, and the ask timeout that bounds its ttl. */
  private defaults(run: HitlRun) {
    const maxWaitMs = this.options.askTimeoutMs;
    return { sessionId: this.sessionId, runId: run.runId, ...(maxWaitMs !== undefined ? { maxWaitMs } : {}) };
  }

  /** Why no new request is taken now: too many wait for an answer. */
  private crowded(): string | undefined {
    if (this.requests.size - this.answeredIds.length < MAX_UNANSWERED_HITL) return undefined;
    return `session ${this.sessionId} has ${MAX_UNANSWERED_HITL} HITL requests waiting for an answer; wait for one (GET /api/hitl/requests/<id>/wait) before making another`;
  }

  private open(envelope: HitlRequestEnvelope, ids: string[], run: HitlRun): Entry {
    const entry: Entry = {
      envelope,
      ids,
      response: answerHitl(this.options, run, envelope).then((response) => {
        entry.answered = response;
        entry.envelope.status = response.status;
        this.answeredIds.push(envelope.requestId);
        if (this.answeredIds.length > MAX_ANSWERED_HITL) this.requests.delete(this.answeredIds.shift()!);
        return response;
      }),
    };
    this.requests.set(envelope.requestId, entry);
    return entry;
  }
}

/** Why a request's payload lists more questions than one request may ask, if it does (an approval asks none). */
function tooManyQuestions(kind: string, payload: Record<string, unknown> | undefined): string | undefined {
  const listed = payload?.questions;
  if (kind === "approval" || !Array.isArray(listed) || listed.length <= MAX_HITL_QUESTIONS) return undefined;
  return `payload.questions lists ${listed.length} questions; a HITL request asks at most ${MAX_HITL_QUESTIONS}: split them into several requests`;
}
