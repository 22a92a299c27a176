// A session/prompt on a session whose turn runs or settles. The daemon refuses it (409) in its REST words ("turn T is
// still running: steer or interrupt it first"): nothing an ACP editor can send. Here they become ACP's: wait, or
// session/cancel. ACP defines no error code for a busy session, so it stays an internal error, with
// `data.reason` "busy" for an editor to tell it from a failure. And a session/cancel of a turn this agent did not
// start is followed to that turn's turn.settled, so that a prompt sent right after it waits rather than is refused.
import { RequestError } from "@agentclientprotocol/sdk";
import type { BrainClient } from "../client/client.js";
import { ClientError } from "../client/errors.js";

/** How long a prompt after session/cancel of another client's turn waits for that turn to settle. */
export const CANCELLED_TURN_WAIT_MS = 30_000;

/** The daemon's refusal of a prompt while a turn runs or settles (core/running-turn.ts refuseWhileRunning). */
const BUSY = /^turn (\S+) is (still running|settling)\b/;

/** The daemon's refusal of an interrupt because the turn is over: its turn.settled comes regardless. */
const NOTHING_TO_INTERRUPT = /^nothing to interrupt\b/;

export interface BusyContext {
  sessionId: string;
  /** Another session/prompt of this editor's, not cancelled, is in progress on the session: its turn, likely. */
  ownPrompt: boolean;
  /** A session/cancel of another client's turn was waited on, and that turn had not settled within the wait. */
  cancelUnheeded: boolean;
}

/** The daemon's refusal of a prompt because the session is busy, in ACP's terms; undefined for any other error. */
export function busyRefusal(err: unknown, { sessionId, ownPrompt, cancelUnheeded }: BusyContext) {
  if (!(err instanceof ClientError) || err.status !== 409) return undefined;
  const busy = BUSY.exec(err.message);
  if (!busy) return undefined;
  const turn = busy[1]!;
  const by = ownPrompt
    ? "this editor's earlier session/prompt, not answered yet"
    : "started by another client";
  const message =
    busy[2] === "settling"
      ? `session ${sessionId} is finishing a turn (${by}): send the prompt again in a moment`
      : cancelUnheeded
        ? `session ${sessionId} is still running a turn ${CANCELLED_TURN_WAIT_MS / 1000} s after session/cancel (${by}): wait for it to end, or send session/cancel again`
        : `session ${sessionId} is running a turn (${by}): wait for it to end, or send session/cancel first`;
  return RequestError.internalError({ reason: "busy", turn, message });
}

/**
 * session/cancel when no prompt of this editor's runs on the session: interrupts the turn running there (another
 * client's) and follows the session's events to its turn.settled, for at most CANCELLED_TURN_WAIT_MS (or until
 * `editorGone`).
 * Resolves true if the wait ran out with that turn still running; false once it has settled, or when none ran.
 */
export async function interruptOthersTurn(
  client: BrainClient,
  sessionId: string,
  editorGone: AbortSignal | undefined,
): Promise<boolean> {
  // Before the interrupt: its turn.settled comes after this last_seq.
  const view = await client.session(sessionId).catch(() => undefined);
  const turn = view?.active_turn;
  if (!view || !turn) return false; // nothing running, nothing to cancel
  const stop = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    stop.abort();
  }, CANCELLED_TURN_WAIT_MS);
  const signal = editorGone ? AbortSignal.any([stop.signal, editorGone]) : stop.signal;
  void client.interrupt(sessionId).catch(async (err) => {
    if (!(err instanceof ClientError) || err.status === 0) return; // out of reach for now: the wait is bounded
    if (NOTHING_TO_INTERRUPT.test(err.message)) {
      // Ending (its turn.settled comes), or settled as the view was read: its turn.settled then came before the
      // stream's start, and would be waited for the whole while.
      const now = await client.session(sessionId).catch(() => undefined);
      if (now?.active_turn === turn) return;
    }
    // Or refused for another reason (another client controls the session, a read-only token): the turn goes on,
    // and the prompt would wait the whole while for nothing; the daemon tells it why.
    stop.abort();
  });
  try {
    // As an observer: watching another client's turn end takes no control of the session.
    const events = client.events(sessionId, { after: view.last_seq ?? 0, signal, role: "observer" });
    for await (const event of events) if (event.type === "turn.settled" && event.turn === turn) return false;
  } catch {
    // The stream refused (the tenant's streams all taken, say): the prompt finds out from the daemon itself.
  } finally {
    clearTimeout(timer);
    stop.abort();
  }
  return timedOut;
}
