// nui's read of one HITL request (cluster mode) that no node said it has pending: its session's owner may be frozen
// (alive in NATS, answering no lookup) or gone. Its session's durable log, which every node reads through the store
// whatever its owner does, still has it pending: the envelope is built from that, as the wait reads its answer there.
import type { Brain } from "../../core/brain.js";
import type { PendingRequest } from "../../core/pending.js";
import type { HitlRequestEnvelope } from "../../protocol/nui/hitl.js";
import { DEFAULT_TENANT } from "../auth/tokens.js";
import { inStoredLogs } from "./cluster-wait.js";
import { isAnswerable, requestEnvelopeOf } from "./envelopes.js";
import { pendingInSeveral } from "./service.js";

/**
 * The one session of `tenant` open on another node whose durable log has the request pending or answered, when no
 * node said it has it pending: its owner may be frozen or dead, or it was answered already; undefined when none
 * has, 409 when several have (ids are the askers': which one was meant is not guessed).
 */
export async function storedAlone(
  brain: Brain,
  tenant: string,
  requestId: string,
): Promise<string | undefined> {
  const where = await inStoredLogs(brain, tenant, requestId);
  if (where.length > 1) throw pendingInSeveral(requestId, where);
  return where[0];
}

/**
 * The request pending in the stored log of `session` (found by `storedAlone` when undefined), as nui's envelope;
 * undefined when the session is not the tenant's, or the request is not pending there: answered already, its read
 * is the 404 a live node gives for a request no longer pending. Its times are those logged with it.
 */
export async function pendingInStoredLog(
  brain: Brain,
  tenant: string,
  session: string | undefined,
  requestId: string,
): Promise<HitlRequestEnvelope | undefined> {
  const where = session ?? (await storedAlone(brain, tenant, requestId));
  if (where === undefined) return undefined;
  const record = await brain.record(where).catch(() => undefined);
  if (!record || (record.tenant ?? DEFAULT_TENANT) !== tenant) return undefined;
  // A session deleted since it was found is simply not where the request is.
  const pending = await brain.pending(where).then(
    (p) => p.pending,
    () => [],
  );
  return storedEnvelopes(where, pending).find((e) => e.requestId === requestId);
}

/**
 * The answerable requests of a stored log's pending ones as nui's envelopes, as a live owner lists them: a request
 * of several questions once, under its first question's id, with every question still pending (the log's
 * `request` says whose each is; the owner's desk, which knows it too, is out of reach).
 */
export function storedEnvelopes(session: string, pending: PendingRequest[]): HitlRequestEnvelope[] {
  const ids = new Set(pending.map((r) => r.id));
  // Its own request when that is no longer pending: a question left alone is listed as itself.
  const requestOf = (r: PendingRequest) =>
    r.kind === "question.requested" && typeof r.data.request === "string" && ids.has(r.data.request)
      ? r.data.request
      : r.id;
  return pending.flatMap((request) => {
    if (!isAnswerable(request) || requestOf(request) !== request.id) return [];
    const more = pending.filter((q) => q.id !== request.id && requestOf(q) === request.id);
    return [requestEnvelopeOf(session, request, storedTimes(request), more)];
  });
}

/**
 * A stored request's times, as its owner's desk gives them: logged at its event's ts, given up at the expiry logged
 * with it. "" for what the log does not say (written before requests logged their expiry).
 */
function storedTimes(request: PendingRequest): { createdAt: string; expiresAt: string } {
  const expires = request.data.expires_at;
  return { createdAt: request.ts ?? "", expiresAt: typeof expires === "string" ? expires : "" };
}

/**
 * nui's list of the requests pending in `session` (of `tenant`; `runId`: of that turn only), from its stored log:
 * its owner is frozen or gone, and the log says which are pending as the owner would. [] when the session is not
 * the tenant's, as a live node lists none of another tenant's.
 */
export async function listedInStoredLog(
  brain: Brain,
  tenant: string,
  session: string,
  runId: string | undefined,
): Promise<HitlRequestEnvelope[]> {
  const record = await brain.record(session).catch(() => undefined);
  if (!record || (record.tenant ?? DEFAULT_TENANT) !== tenant) return [];
  const pending = await brain.pending(session).then(
    (p) => p.pending,
    () => [],
  );
  return storedEnvelopes(session, pending).filter((e) => !runId || e.runId === runId);
}
