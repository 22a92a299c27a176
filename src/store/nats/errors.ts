// Errors of the cluster store, carrying Brain's error code like the embedded store's: NATS trouble is the
// host's (brain_error), a session written by another owner is `locked`, a bad id is the caller's.
import { JetStreamApiCodes, JetStreamApiError } from "@nats-io/jetstream";
import type { KV, KvEntry } from "@nats-io/kv";
import { BrainError } from "../../core/errors.js";
import { sleep } from "../../core/sleep.js";

export class NatsStoreError extends BrainError {
  override name = "NatsStoreError";
  constructor(
    code: "brain_error" | "bad_request" | "locked" | "payload_too_large",
    message: string,
    options?: { cause?: unknown },
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
const INSUFFICIENT_RESOURCES = 10023;

/**
 * The stream refused a publish for good: past its limits (max_bytes, max_msgs, max_msgs_per_subject with discard
 * new), a message larger than it takes, or no storage left. Asking again within seconds stores nothing either.
 * A store failure that is not a limit (the stream's store closing as a node stops) may pass and is not one.
 */
export function isRefusedForLimits(err: unknown): boolean {
  if (!(err instanceof JetStreamApiError)) return false;
  if (err.code === MESSAGE_TOO_LARGE || err.code === INSUFFICIENT_RESOURCES) return true;
  return err.code === STORE_FAILED && /maximum .*exceeded/i.test(err.message);
}

/**
 * A request nobody answered in time, or no server took (a stream between leaders, a node restarting): worth
 * asking again. Anything else (a stream that does not exist, a refusal) is an answer.
 */
export function isUnanswered(err: unknown): boolean {
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
  );
}

export function natsFailure(what: string, err: unknown): NatsStoreError {
  if (err instanceof BrainError) return err as NatsStoreError;
  return new NatsStoreError("brain_error", `${what}: NATS: ${errorMessage(err)}`, { cause: err });
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
