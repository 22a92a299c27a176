// Idempotency-Key on commands (prompt, steer, interrupt, answers, checkpoint): a client retrying after an
// ambiguous failure sends the same key and gets the first answer instead of a second run. Whether a key ran is
// read from the session's log (src/core/command-keys.ts), so it holds across nodes and restarts; two requests
// with one key arriving at once on the owner share one run.
import { commandKey, type KeyedEventType } from "../core/command-keys.js";
import type { Session } from "../core/session.js";
import { IDEMPOTENCY_KEY, type SessionEvent } from "../protocol/events.js";
import { ApiError } from "./errors.js";

export const IDEMPOTENCY_HEADER = "Idempotency-Key";

/** The header's value, checked; undefined when the client sent none. */
export function idempotencyKey(value: string | undefined): string | undefined {
  if (value === undefined || value === "") return undefined;
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
  if (value.length > 200) return `it is ${value.length} characters long`;
  const chars = [...value];
  const at = chars.findIndex((char) => !IDEMPOTENCY_KEY.test(char));
  const code = chars[at]!.codePointAt(0)!;
  const what = code === 0x20 ? "a space" : `U+${code.toString(16).toUpperCase().padStart(4, "0")}`;
  return `character ${at + 1} is ${what}`;
}

/** A keyed command running: what it is, so that only a retry of the same command shares its run. */
interface Running {
  kinds: readonly KeyedEventType[];
  subject: string;
  run: Promise<unknown>;
}

export class IdempotentCommands {
  /** Keyed commands running on this node, by session and key. */
  private readonly running = new Map<string, Running>();

  /**
   * Runs `command` once per key: when the log already holds an event of `kinds` with this key, `answer` makes
   * the first run's answer from it. A key used before for another kind of command is refused, and so is one
   * still in use by another command (`subject` tells apart commands of one kind: the request an answer is for).
   */
  async run<T>(
    session: Session,
    key: string | undefined,
    kinds: readonly KeyedEventType[],
    command: () => Promise<T>,
    answer: (event: SessionEvent) => T,
    subject = "",
  ): Promise<T> {
    if (key === undefined) return command();
    const slot = `${session.id}\u0000${key}`;
    const same = this.running.get(slot);
    if (same) {
      if (same.kinds.join() === kinds.join() && same.subject === subject) return same.run as Promise<T>;
      throw new ApiError(
        "conflict",
        `${IDEMPOTENCY_HEADER} "${key}" is in use by another command of session ${session.id} (${same.kinds.join(" or ")}${same.subject ? ` ${same.subject}` : ""}), still running; send a new key for a new command`,
        IDEMPOTENCY_HEADER,
      );
    }
    const run = (async () => {
      const earlier = await session.commandEvent(key);
      if (!earlier) return command();
      if (!(kinds as readonly string[]).includes(earlier.type) || commandKey(earlier) !== key) {
        throw new ApiError(
          "conflict",
          `${IDEMPOTENCY_HEADER} "${key}" was used for an earlier ${earlier.type} (seq ${earlier.seq}) of session ${session.id}; send a new key for a new command`,
          IDEMPOTENCY_HEADER,
        );
      }
      return answer(earlier);
    })();
    this.running.set(slot, { kinds, subject, run });
    try {
      return await run;
    } finally {
      if (this.running.get(slot)?.run === run) this.running.delete(slot);
    }
  }
}
