// Errors of the cluster store, carrying Brain's error code like the embedded store's: NATS trouble is the
// host's (brain_error), a session written by another owner is `locked`, a bad id is the caller's, and NATS with no
// room left (a stream at its limits, the server's JetStream storage full) is `insufficient_storage`, as a full disk.
import { JetStreamApiCodes, JetStreamApiError } from "@nats-io/jetstream";
import type { KV, KvEntry } from "@nats-io/kv";
import { BrainError } from "../../core/errors.js";
import { sleep } from "../../core/sleep.js";
import { SESSION_ID } from "../fs/session-record.js";
import type { NatsContext } from "./context.js";

export class NatsStoreError extends BrainError {
  override name = "NatsStoreError";
  constructor(
    code: "brain_error" | "bad_request" | "locked" | "payload_too_large" | "insufficient_storage",
    message: string,
    options?: { cause?: unknown; session?: string },
  ) {
    super(code, message, options);
  }
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** The stream refused a publish because the subject's last message is not the one this writer knows. */
export function isWrongLastSequence(err: unknown): boolean {
  return (
    err instanceof JetStreamApiError &&
    (err.code === JetStreamApiCodes.StreamWrongLastSequence ||
      err.code === JetStreamApiCodes.StreamWrongLastSequenceUnknown)
  );
}

/** JetStream error codes of a publish refused for the stream's limits or the server's storage. */
const STORE_FAILED = 10077;
const MESSAGE_TOO_LARGE = 10054;
/** The server's JetStream storage (max_file_store, max_memory_store) is used up. */
const INSUFFICIENT_RESOURCES = 10023;
/** The account's JetStream storage limit is used up. */
const ACCOUNT_RESOURCES_EXCEEDED = 10002;

/**
 * The stream refused a publish for good: past its limits (max_bytes, max_msgs, max_msgs_per_subject with discard
 * new), a message larger than it takes, or no storage left. Asking again within seconds stores nothing either.
 * A store failure that is not a limit (the stream's store closing as a node stops) may pass and is not one.
 */
export function isRefusedForLimits(err: unknown): boolean {
  return isTooLargeForStream(err) || isStorageFull(err);
}

/** The stream refused a message larger than its max_msg_size. */
export function isTooLargeForStream(err: unknown): boolean {
  return err instanceof JetStreamApiError && err.code === MESSAGE_TOO_LARGE;
}

/**
 * A publish of `what` (its message `body`) the events stream refused for its limits, as Brain's error: too large for its
 * max_msg_size (read from the stream, to name it), or no room left.
 */
export async function refusedByStream(
  ctx: Pick<NatsContext, "jsm" | "stream" | "maxMsgSize">,
  what: string,
  body: string,
  err: unknown,
): Promise<NatsStoreError> {
  if (!isTooLargeForStream(err)) {
    const why = `refused by the events stream ${ctx.stream}: raise the stream's limits or free its storage`;
    return natsFailure(`${what} ${why}`, err);
  }
  const limit = await ctx.jsm.streams.info(ctx.stream).then(
    (info) => info.config.max_msg_size,
    () => undefined,
  );
  // Lowered since the store read it: later batches are cut under the limit the stream holds now.
  if (limit !== undefined) ctx.maxMsgSize = msgSizeOf(limit);
  return tooLargeForStream(what, Buffer.byteLength(body), ctx.stream, limit, err);
}

/** A stream's max_msg_size as a limit: none when unset (-1, or 0 from an older server). */
export function msgSizeOf(maxMsgSize: number | undefined): number | undefined {
  return maxMsgSize !== undefined && maxMsgSize > 0 ? maxMsgSize : undefined;
}

/**
 * A message the stream refused as larger than its max_msg_size (`limit`, when it could be read) as the caller's
 * (413), as the embedded store's frame cap and the server's max_payload are: the same request is refused again,
 * so it says what was too large and what to do rather than answer a 500 that reads as the host's bug.
 */
export function tooLargeForStream(
  what: string,
  bytes: number,
  stream: string,
  limit: number | undefined,
  err: unknown,
): NatsStoreError {
  const most = limit !== undefined && limit >= 0 ? `up to ${limit} bytes a message` : "messages no larger";
  return new NatsStoreError(
    "payload_too_large",
    `${what} is ${bytes} bytes, and the events stream ${stream} takes ${most} (its max_msg_size): this request was not taken, and nothing the session acknowledged before it is lost; send less in one request, or raise the stream's max_msg_size (NATS: ${errorMessage(err)})`,
    { cause: err },
  );
}

/**
 * NATS has no room for the write: the server's or the account's JetStream storage is used up (their own codes), or
 * the stream is at its max_bytes, max_msgs or max_msgs_per_subject with discard new. nats-server has no code of
 * its own for those: it answers "store failed" (10077) with Go's ErrMaxBytes / ErrMaxMsgs text, so only there is
 * the text read.
 */
export function isStorageFull(err: unknown): boolean {
  if (!(err instanceof JetStreamApiError)) return false;
  if (err.code === INSUFFICIENT_RESOURCES || err.code === ACCOUNT_RESOURCES_EXCEEDED) return true;
  return err.code === STORE_FAILED && /maximum .*exceeded/i.test(err.message);
}

/** JetStream's "system temporarily unavailable" (503): the cluster has no meta leader yet, a node just died. */
const CLUSTER_NOT_AVAILABLE = 10008;

/**
 * A request nobody answered in time, or no server took (a stream between leaders, a node restarting), or one the
 * cluster said it cannot answer yet (between meta leaders, after a node was killed): worth asking again. Anything
 * else (a stream that does not exist, a refusal) is an answer.
 */
export function isUnanswered(err: unknown): boolean {
  if (err instanceof JetStreamApiError) return err.code === CLUSTER_NOT_AVAILABLE;
  if (!(err instanceof Error)) return false;
  if (err.name === "TimeoutError" || err.name === "NoResponders") return true;
  return (
    err.name === "RequestError" && (err as Error & { isNoResponders?(): boolean }).isNoResponders?.() === true
  );
}

/**
 * After a KV write that failed: the entry, when the key holds `value` written after revision `after` anyway (a
 * write stored though its answer was lost, a timeout through a leader election); undefined otherwise, and when
 * the key cannot be read.
 */
export async function storedUnanswered(
  kv: KV,
  key: string,
  value: string,
  after = 0,
): Promise<KvEntry | undefined> {
  const entry = await kv.get(key).catch(() => null);
  return entry?.operation === "PUT" && entry.revision > after && entry.string() === value ? entry : undefined;
}

/** Another node wrote the session's log, or took its lease: this writer must stop. */
export function fenced(session: string, why: string): NatsStoreError {
  return new NatsStoreError(
    "locked",
    `session ${session}: this node no longer owns the session's log (${why}); its owner now is another node`,
    { session },
  );
}

/**
 * A NATS failure as Brain's error. No room left says what it means to the client (as the embedded store's full
 * disk does: ../fs/errors.ts), so it answers 507 and is sent again once the operator made room, not taken for a bug.
 */
export function natsFailure(what: string, err: unknown): NatsStoreError {
  if (err instanceof BrainError) return err as NatsStoreError;
  const message = `${what}: NATS: ${errorMessage(err)}`;
  if (!isStorageFull(err)) return new NatsStoreError("brain_error", message, { cause: err });
  return new NatsStoreError(
    "insufficient_storage",
    `${message}. NATS JetStream has no room left: this request was not taken, and nothing the session acknowledged before it is lost; raise the stream's limits or the server's JetStream storage (max_file_store), or free some, then send it again`,
    { cause: err },
  );
}

/**
 * Runs `request` until it succeeds, again after a back-off (50 ms doubling up to 1 s) while `retryable` says its
 * failure is worth another try, for up to `budgetMs`: a NATS cluster between leaders answers within seconds.
 * A failure not retried, or the last one, is thrown as `giveUp(err, tries)` makes it.
 */
export async function retrying<T>(
  budgetMs: number,
  request: () => Promise<T>,
  retryable: (err: unknown) => boolean,
  giveUp: (err: unknown, tries: number) => Error,
): Promise<T> {
  const deadline = Date.now() + budgetMs;
  for (let attempt = 0; ; attempt++) {
    try {
      return await request();
    } catch (err) {
      if (!retryable(err) || Date.now() >= deadline) throw giveUp(err, attempt + 1);
      await sleep(Math.min(1000, 50 * 2 ** attempt));
    }
  }
}

/** A session id the store can take (the embedded store's rule: ids are one namespace in both), or a 400. */
export function checkId(id: string): void {
  if (typeof id !== "string" || !SESSION_ID.test(id)) {
    throw new NatsStoreError(
      "bad_request",
      `bad session id ${JSON.stringify(id)}: must match ${SESSION_ID.source}`,
    );
  }
}
