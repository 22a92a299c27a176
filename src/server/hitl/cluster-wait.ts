// nui's wait for a HITL request of a session another node owns (cluster mode): read from the session's durable
// log, which every node reads through the store, not from its owner, which may be frozen (alive in NATS, not
// answering) or may close the session right after the answer. The wait ends with the answer once the log holds it,
// and keeps waiting while the request is pending there.
import type { Brain } from "../../core/brain.js";
import { sleep } from "../../core/sleep.js";
import type { SessionEvent } from "../../protocol/events.js";
import type { HitlResponseEnvelope } from "../../protocol/nui/hitl.js";
import { DEFAULT_TENANT } from "../auth/tokens.js";
import { ApiError } from "../errors.js";
import { isAnswerable, RequestAnswers } from "./envelopes.js";
import { answeredInLog, answerId, HITL_LOOKBACK_EVENTS, type LogPages } from "./log-lookup.js";

/** How often a wait reads the new events of a log another node writes (one store read each time). */
export const STORED_WAIT_POLL_MS = 500;

/**
 * The answer to `requestId` in `session` (of `tenant`), once its log holds it; undefined at once when the session is
 * not the tenant's, or the request is neither pending in it nor answered among its last events.
 */
export async function waitInStoredLog(
  brain: Brain,
  tenant: string,
  session: string,
  requestId: string,
  signal: AbortSignal,
): Promise<HitlResponseEnvelope | undefined> {
  const record = await brain.record(session).catch(() => undefined);
  if (!record || (record.tenant ?? DEFAULT_TENANT) !== tenant) return undefined;
  // Pending as of `after`: its answer, when it comes, is logged after it. Answered already: among the last events.
  const { lastSeq, pending } = await brain.pending(session);
  if (!pending.some((r) => r.id === requestId)) return answeredInLog(await stored(brain, session), requestId);
  let after = lastSeq;
  for (;;) {
    if (!(await sleep(STORED_WAIT_POLL_MS, signal)))
      throw new ApiError("conflict", "the client stopped waiting");
    for (;;) {
      const page = await brain.events(session, after, HITL_LOOKBACK_EVENTS);
      if (page.length === 0) break;
      const answer = page.find((e) => answerId(e) === requestId);
      if (answer) return (await answeredInLog(await stored(brain, session), requestId)) ?? alone(answer);
      after = page.at(-1)!.seq;
    }
  }
}

/**
 * The sessions of `tenant` open on other nodes whose durable logs have `requestId` pending, or answered among their
 * last events: where a wait naming no session looks when no node said it has the request pending (its owner frozen,
 * which answers no lookup, or the request answered already, which no node has pending). Read through the store,
 * which every node reads whatever their owners do; sessions closed are left to a wait that names them.
 */
export async function inStoredLogs(brain: Brain, tenant: string, requestId: string): Promise<string[]> {
  const found: string[] = [];
  for (const summary of await brain.list(undefined, tenant)) {
    const { id } = summary;
    if (summary.status === "closed" || brain.liveSession(id)) continue;
    // A session deleted since it was listed is simply not where the request is.
    const has = await pendingOrAnswered(brain, id, requestId).catch(() => false);
    if (has) found.push(id);
  }
  return found;
}

async function pendingOrAnswered(brain: Brain, session: string, requestId: string): Promise<boolean> {
  const { pending } = await brain.pending(session);
  if (pending.some((r) => r.id === requestId && isAnswerable(r))) return true;
  return (await answeredInLog(await stored(brain, session), requestId)) !== undefined;
}

/** The session's log as the lookups read it, up to its last seq now: the open log if it is open here. */
async function stored(brain: Brain, session: string): Promise<LogPages> {
  const lastSeq = await brain.lastSeq(session);
  return { lastSeq, read: (after, limit) => brain.events(session, after, limit) };
}

/** The response to a one-question request (its questions' keys out of reach, far back in a long log). */
function alone(answer: SessionEvent): HitlResponseEnvelope | undefined {
  const id = answerId(answer)!;
  return new RequestAnswers(id, new Map([[id, id]])).see(answer);
}
