// Where nui's HITL API, and an answer the daemon refuses, look for requests and answers in a session's log: among its
// last events, or after a seq, a page at a time, never the whole log held at once.
import type { EventLog } from "../../core/event-log.js";

/** What the lookups read of a log: an open session's own, or a stored one read through the store (another node owns it). */
export type LogPages = Pick<EventLog, "lastSeq" | "read">;

import { SessionError } from "../../core/errors.js";
import type { ReplyBody, ReplyFrom } from "../../core/request-desk.js";
import type { Session } from "../../core/session.js";
import type { SessionEvent } from "../../protocol/events.js";
import type { HitlResponseEnvelope } from "../../protocol/nui/hitl.js";
import { RequestAnswers } from "./envelopes.js";

/**
 * How far back a request id not pending anywhere is looked for in each of the caller's open sessions: a request is
 * awaited or answered soon after it is asked, and a lookup that read whole logs let one request (for an id that
 * is nowhere) read every log of the tenant from its start.
 */
export const HITL_LOOKBACK_EVENTS = 1000;

/** The first thing `pick` finds among the log's last HITL_LOOKBACK_EVENTS events, read as one page. */
export async function recentInLog<T>(
  log: LogPages,
  pick: (event: SessionEvent) => T | undefined,
): Promise<T | undefined> {
  const page = await log.read(Math.max(0, log.lastSeq - HITL_LOOKBACK_EVENTS), HITL_LOOKBACK_EVENTS);
  for (const event of page) {
    const found = pick(event);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** The first thing `pick` finds in the log after seq `after`, up to its last seq now, read a page at a time. */
export async function loggedAfter<T>(
  log: LogPages,
  after: number,
  pick: (event: SessionEvent) => T | undefined,
): Promise<T | undefined> {
  const last = log.lastSeq;
  while (after < last) {
    const page = await log.read(after, HITL_LOOKBACK_EVENTS);
    if (page.length === 0) return undefined;
    for (const event of page) {
      const found = pick(event);
      if (found !== undefined) return found;
    }
    after = page.at(-1)!.seq;
  }
  return undefined;
}

/**
 * The response to a request answered already, its answer among the log's last events: every question of a request of
 * several (their question.requested events name it), as the desk that asked them is gone once it is answered. Its
 * questions are found going back from its answer to the first of them, however far back it was asked, then their
 * answers going forward from there until all are found: a page at a time, each event read once each way, none held
 * but the questions' keys and answers.
 */
export async function answeredInLog(
  log: LogPages,
  requestId: string,
): Promise<HitlResponseEnvelope | undefined> {
  const answered = await recentInLog(log, (e) => (answerId(e) === requestId ? e : undefined));
  if (!answered) return undefined;
  if (answered.type !== "question.answered")
    return new RequestAnswers(requestId, new Map([[requestId, requestId]])).see(answered);
  const { from, keys } = await questionsBefore(log, requestId, answered.seq);
  const gather = new RequestAnswers(requestId, keys);
  return loggedAfter(log, from - 1, (e) => gather.see(e));
}

/**
 * Going back from seq `before` a page at a time: the seq of the last question.requested with this id (1 if none),
 * and the key of each question of its request asked from there on (its own first, as nui keys them: by question).
 * A request's questions are all asked before any of them is answered, so all are between it and its answer.
 */
async function questionsBefore(
  log: LogPages,
  requestId: string,
  before: number,
): Promise<{ from: number; keys: Map<string, string> }> {
  const asked: { seq: number; id: string; question: string }[] = [];
  let from: number | undefined;
  for (let end = before - 1; end > 0 && from === undefined; end -= HITL_LOOKBACK_EVENTS) {
    // A page may end early (PAGE_BYTES): read on until this span's end, so no question is missed.
    for (let after = Math.max(0, end - HITL_LOOKBACK_EVENTS); after < end; ) {
      const page = await log.read(after, end - after);
      if (page.length === 0) break;
      for (const e of page) {
        if (e.seq >= before || e.type !== "question.requested") continue;
        if (e.data.id === requestId) from = Math.max(from ?? 0, e.seq);
        if (e.data.id === requestId || e.data.request === requestId)
          asked.push({ seq: e.seq, id: e.data.id, question: e.data.question });
      }
      after = page.at(-1)!.seq;
    }
  }
  const start = from ?? 1;
  // Its own question first, so a request of one, or one logged before `request`, is its one answer.
  const keys = new Map([[requestId, requestId]]);
  for (const q of asked.filter((q) => q.seq >= start).sort((a, b) => a.seq - b.seq))
    keys.set(q.id, q.question);
  return { from: start, keys };
}

export function answerId(event: SessionEvent): string | undefined {
  return event.type === "permission.resolved" || event.type === "question.answered"
    ? event.data.id
    : undefined;
}

/**
 * Clients' answers to requests of `session` (RequestDesk.replyAll). The desk refuses one not pending there (409); when
 * no request of that id was asked among the log's last HITL_LOOKBACK_EVENTS events, it is another session's, or an id
 * never given: a 404, as for another tenant's. One asked stays a 409 (answered already, or given up), as does one
 * the log cannot be read for.
 */
export async function answerInSession(
  session: Pick<Session, "id" | "log" | "desk">,
  replies: readonly (readonly [string, ReplyBody])[],
  from: ReplyFrom,
): Promise<void> {
  try {
    await session.desk.replyAll(replies, session.id, from);
  } catch (err) {
    if (!(err instanceof SessionError && err.code === "conflict")) throw err;
    const requestId = replies[0]![0];
    const asked = (e: SessionEvent) =>
      (e.type === "permission.requested" || e.type === "question.requested") && e.data.id === requestId;
    if (await recentInLog(session.log, (e) => asked(e) || undefined).catch(() => true)) throw err;
    throw new SessionError(
      "not_found",
      `no permission request or question "${requestId}" was asked in session ${session.id}: answer it in the session that asked it (its events and its view's "pending" name the request ids)`,
    );
  }
}
