// Idempotency-Key on commands (prompt, steer, interrupt, answers, checkpoint): a client retrying after an
// ambiguous failure sends the same key and gets the first answer instead of a second run. Whether a key ran is
// read from the session's log (src/core/command-keys.ts), so it holds across nodes and restarts; two requests
// with one key arriving at once on the owner share one run.
import { commandKey, type KeyedEventType, sentDigest } from "../core/command-keys.js";
import type { Session } from "../core/session.js";
import type { AnswerBody } from "../protocol/api.js";
import { IDEMPOTENCY_KEY, type SessionEvent } from "../protocol/events.js";
import { ApiError } from "./errors.js";

export const IDEMPOTENCY_HEADER = "Idempotency-Key";

/**
 * The header's value, checked; undefined when the client sent none. An empty value is refused, not taken as no
 * key: a client whose key came out empty means to retry under it, and without a key its retry would run again.
 */
export function idempotencyKey(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (!IDEMPOTENCY_KEY.test(value)) {
    throw new ApiError(
      "bad_request",
      `header ${IDEMPOTENCY_HEADER}: ${keyFault(value)}; send 1 to 200 printable ASCII characters without spaces (e.g. a UUID)`,
      IDEMPOTENCY_HEADER,
    );
  }
  return value;
}

/**
 * What is wrong with a key, without its text: a client may have put a secret there by mistake, and a slice of
 * one is not caught by the redaction of error bodies, which knows whole secrets only.
 */
function keyFault(value: string): string {
  if (value === "") return "it is empty";
  if (value.length > 200) return `it is ${value.length} characters long`;
  const chars = [...value];
  const at = chars.findIndex((char) => !IDEMPOTENCY_KEY.test(char));
  const code = chars[at]!.codePointAt(0)!;
  const what = code === 0x20 ? "a space" : `U+${code.toString(16).toUpperCase().padStart(4, "0")}`;
  return `character ${at + 1} is ${what}`;
}

/** What a keyed command is, to tell a retry of it from another command sent under its key. */
export interface KeyedRequest {
  /** The events that record a command of its kind (a retry finds the first run's among them). */
  kinds: readonly KeyedEventType[];
  /** The event this request would write, and its data as far as the client sent it (sentDigest). */
  type: KeyedEventType;
  data: Record<string, unknown>;
  /** What tells apart commands of one kind: the request an answer is for. */
  subject?: string;
}

/** A command of one kind, recorded by an event of `type` holding what its client sent. */
export const keyedAs = (type: KeyedEventType, data: Record<string, unknown> = {}): KeyedRequest => ({
  kinds: [type],
  type,
  data,
});

/** An answer to request `requestId`: a permission's decision or a question's answer, as `body` says. */
export function answerRequest(requestId: string, body: AnswerBody): KeyedRequest {
  const type = "decision" in body ? "permission.resolved" : "question.answered";
  return { kinds: ["permission.resolved", "question.answered"], type, data: body, subject: requestId };
}

/** A keyed command running: what it is, so that only a retry of the same command shares its run. */
interface Running {
  kinds: readonly KeyedEventType[];
  subject: string;
  sent: string;
  run: Promise<unknown>;
}

export class IdempotentCommands {
  /** Keyed commands running on this node, by session and key. */
  private readonly running = new Map<string, Running>();

  /** `waitMs`: how long a retry waits for the first run under its key (awaitFirst). */
  constructor(private readonly waitMs = KEYED_WAIT_MS) {}

  /**
   * Runs `command` once per key: when the log already holds an event of `request.kinds` with this key, `answer`
   * makes the first run's answer from it. A key used before for another kind of command, for another subject or
   * with another body is refused (a retry is the same request again), and so is one still in use by another.
   */
  async run<T>(
    session: Session,
    key: string | undefined,
    request: KeyedRequest,
    command: () => Promise<T>,
    answer: (event: SessionEvent) => T,
  ): Promise<T> {
    if (key === undefined) return command();
    const { kinds, subject = "" } = request;
    // As the log holds it: redacted, so a retry of a prompt that quoted a secret matches the logged one.
    const data = session.redactor.redactDeep(request.data);
    const sent = sentDigest(request.type, data);
    const slot = `${session.id}\u0000${key}`;
    const same = this.running.get(slot);
    if (same) {
      if (same.kinds.join() === kinds.join() && same.subject === subject && same.sent === sent) {
        const what = `${same.kinds.join(" or ")} of session ${session.id}`;
        return awaitFirst(same.run as Promise<T>, key, what, this.waitMs);
      }
      // Another request under the key, whether or not the first still runs: the same 422 as once it is done.
      throw keyReused(
        key,
        `its first request is another command of session ${session.id} (${same.kinds.join(" or ")}${same.subject ? ` ${same.subject}` : ""}, still running)`,
        "command",
      );
    }
    const run = (async () => {
      const earlier = await session.commandEvent(key);
      if (!earlier) return command();
      const { event } = earlier;
      if (!(kinds as readonly string[]).includes(event.type) || commandKey(event) !== key) {
        throw keyReused(
          key,
          `its first request was another command, the ${event.type} of seq ${event.seq} of session ${session.id}`,
          "command",
        );
      }
      const result = answer(event);
      // Another body under the key is another command: answered with the first one's result, its client would
      // take for done what never ran (another prompt, the opposite decision).
      if (event.type !== request.type || earlier.sent !== sentDigest(event.type, data)) {
        throw keyReused(
          key,
          `its first request, the ${event.type} of seq ${event.seq} of session ${session.id}, had another body`,
          "command",
        );
      }
      return result;
    })();
    this.running.set(slot, { kinds, subject, sent, run });
    try {
      return await run;
    } finally {
      if (this.running.get(slot)?.run === run) this.running.delete(slot);
    }
  }
}

/**
 * The refusal of `key` sent with another request than its first (`first` says how that one differs: another body,
 * another command): 422 `idempotency_key_reused`, as the IETF Idempotency-Key draft (draft-ietf-httpapi-idempotency-
 * key-header, "Error Scenarios") answers "an attempt to reuse an idempotency key with a different request payload".
 * Never the first request's answer: its client would take for done what never ran (another prompt, the opposite
 * decision). `request` names what a new one is (a new `command`, `create`, `restore`) in the advice.
 */
export const keyReused = (key: string, first: string, request: string) =>
  new ApiError(
    "idempotency_key_reused",
    `${IDEMPOTENCY_HEADER} "${key}" was already used: ${first}. A retry sends the same request under it again; a new ${request} needs a new key`,
    IDEMPOTENCY_HEADER,
  );

// A retry that arrives while the first request under its key still runs shares that run, and gets its answer; but
// a first run that hangs (a stalled disk, a harness that never answers) would hold every retry with it, and the
// client, retrying because it heard nothing, would hear nothing again. A retry waits a bounded time, then is told
// so: 409 naming the key, as the IETF Idempotency-Key draft answers a request still in progress. The same bound and
// answer on every keyed route (commands here, creates, deletes, takes, rebuilds, restores).

/** How long a retry waits for the first request under its key, when the daemon is not told otherwise. */
export const KEYED_WAIT_MS = 30_000;

/**
 * `first`'s outcome, or, when it has not settled within `waitMs`, a 409 saying that the request under `key` (what
 * `what` says) is still running. The first run goes on either way: a later retry gets its answer.
 */
export function awaitFirst<T>(first: Promise<T>, key: string, what: string, waitMs: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const waited = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(stillRunning(key, what, waitMs)), waitMs);
    timer.unref();
  });
  return Promise.race([first, waited]).finally(() => clearTimeout(timer));
}

const stillRunning = (key: string, what: string, waitMs: number) =>
  new ApiError(
    "conflict",
    `${IDEMPOTENCY_HEADER} "${key}": the first request under it (${what}) is still running after ${Math.round(waitMs / 1000)} s; send the same request under the same key again later to get its answer`,
    IDEMPOTENCY_HEADER,
  );
