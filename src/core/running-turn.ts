// What a session keeps of the turn it runs: its interrupt, what it has in flight, how it failed, when its prompt
// reached the harness, and how much steering it has taken.
import { randomUUID } from "node:crypto";
import { setMaxListeners } from "node:events";
import type { ErrorInfo, NewEvent, TurnStatus } from "../protocol/events.js";
import { SessionError } from "./errors.js";
import type { Harness, HarnessError, HarnessFactory, Steering } from "./harness.js";
import { InFlight } from "./in-flight.js";
import type { TurnWrites } from "./log-writer.js";
import { sleep } from "./sleep.js";

/**
 * The most steering one turn takes. A harness holds a steer until it can use it (the api harness in the daemon's
 * memory until the turn's next step, a CLI family as a follow-up model turn each), so a client steering without
 * end would grow the daemon until it fell over, with every tenant's sessions.
 */
export const STEER_LIMITS = { count: 100, bytes: 16 << 20 } as const;

export interface RunningTurn extends TurnWrites {
  abort: AbortController;
  toolCalls: InFlight;
  failure?: HarnessError;
  /** Its harness is done with it (its close-out is being written): no steer or interrupt reaches it now. */
  ended?: boolean;
  steered: { count: number; bytes: number };
  /**
   * The harness once the turn's prompt has been sent to it, or undefined when the turn ended before. A turn is
   * running (and steerable) from its user.prompt on, while its harness may still be starting: a steer sent then
   * would reach no harness, or a runner that has not had the prompt and refuses it.
   */
  prompted: Promise<Harness | undefined>;
  /** Settles `prompted`; the first call wins. */
  reached(harness: Harness | undefined): void;
}

/** A turn requests may be made in: its id, and a signal aborted once its harness is done with it (or interrupted). */
export interface AskingTurn {
  id: string;
  signal: AbortSignal;
}

/** The running turn while its harness works on it; none once its close-out is being written. */
export function askingTurn(turn: RunningTurn | undefined): AskingTurn | undefined {
  return turn && !turn.ended ? { id: turn.id, signal: turn.abort.signal } : undefined;
}

export function newTurn(): RunningTurn {
  let reached: (harness: Harness | undefined) => void = () => {};
  const prompted = new Promise<Harness | undefined>((resolve) => {
    reached = resolve;
  });
  const abort = new AbortController();
  setMaxListeners(0, abort.signal); // every tool call in flight listens for the interrupt
  return {
    id: randomUUID(),
    abort,
    toolCalls: new InFlight(),
    writes: new InFlight(),
    steered: { count: 0, bytes: 0 },
    prompted,
    reached: (harness) => reached(harness),
  };
}

/**
 * Why a turn's signal was aborted, for what it cancels (a tool call, a request waiting for an answer): the turn's end
 * gives its reason (a runner that crashed, a log that could not be written); a plain abort is a client's interrupt.
 * A crash told as an interrupt sent whoever read the log looking for the wrong cause.
 */
export function whyStopped(signal: AbortSignal): string {
  const reason: unknown = signal.reason;
  return reason instanceof Error && reason.name !== "AbortError"
    ? reason.message
    : "the turn was interrupted";
}

/**
 * Marks the turn ended and aborts its signal for what it abandoned (tool calls, requests), with why (whyStopped): its
 * failure, or its end. An interrupted turn's is the interrupt's plain abort: a harness that cancels its tools only
 * once it has taken the interrupt (a CLI) ends its turn first, and its requests read "the turn ended" for an interrupt.
 */
export function endTurn(turn: RunningTurn, status: TurnStatus, error: ErrorInfo | undefined): void {
  turn.ended = true;
  turn.reached(undefined);
  if (error) turn.abort.abort(new Error(`the turn failed: ${error.message}`));
  else turn.abort.abort(status === "interrupted" ? undefined : new Error("the turn ended"));
}

/** Counts a steer against the turn's share, or refuses it (naming the limit) when it would go past it. */
/**
 * Tells the harness of the interrupt, and cancels the turn's pending tool calls (and requests) at once, or once the
 * harness has taken it when it asks for that (Harness.cancelsToolsAfterInterrupt): its own end, a kill after the
 * interrupt's grace or the turn's end bound that wait.
 */
/**
 * The events of an interrupt: `user.interrupt`, and when the turn's harness is still `starting` (a container being
 * pulled and started), a harness.warning that the interrupt waits for that start. An interrupt does not stop it: the
 * next turn would only start it again. The turn ends once it is up, without its prompt.
 */
export function interruptEvents(turn: string, keyed: object, starting: boolean): NewEvent[] {
  const events: NewEvent[] = [{ type: "user.interrupt", turn, data: keyed }];
  if (!starting) return events;
  const message =
    "the session's harness is still starting (its container or program): the interrupt takes effect once it is up, and the turn then ends without its prompt";
  return [...events, { type: "harness.warning", turn, data: { message } }];
}

export function interruptHarness(turn: RunningTurn, harness: Harness | undefined): Promise<void> | undefined {
  const interrupting = harness?.interrupt(turn.id).finally(() => turn.abort.abort());
  if (!harness?.cancelsToolsAfterInterrupt) turn.abort.abort();
  return interrupting;
}

export function takeSteer(turn: RunningTurn, text: string): void {
  const bytes = Buffer.byteLength(text);
  const { steered } = turn;
  if (steered.count >= STEER_LIMITS.count || steered.bytes + bytes > STEER_LIMITS.bytes) {
    throw new SessionError(
      "limit_reached",
      `turn ${turn.id} has taken ${steered.count} steers (${mib(steered.bytes)} MiB); a turn takes at most ${STEER_LIMITS.count} steers and ${mib(STEER_LIMITS.bytes)} MiB of them: send the rest as a prompt once the turn settles`,
    );
  }
  steered.count++;
  steered.bytes += bytes;
}

const mib = (bytes: number) => Math.ceil(bytes / (1 << 20));

/** A steer refused because its turn ended before the steer reached the harness. */
export const steerTooLate = () =>
  new SessionError("conflict", "nothing to steer: the turn ended before the steer reached it");

/**
 * What a user.steer says of how it is delivered (`queued: true`, or nothing when live), or a refusal when the
 * session's harness takes no steers: as its factory says, or, for a factory running a different harness per
 * session (a dev container's inner harness), as the session's harness says once open.
 */
export async function queuedMark(
  session: { factory: HarnessFactory; harnessName: string },
  harness: Harness | undefined,
  opening: Promise<Harness> | undefined,
): Promise<{ queued?: true }> {
  const { factory } = session;
  const steering: Steering =
    factory.steering !== "per-session"
      ? { supported: factory.supportsSteering, ...(factory.steering ? { mode: factory.steering } : {}) }
      : ((harness ?? (await opening?.catch(() => undefined)))?.steeringOf ?? { supported: false });
  if (!steering.supported)
    throw new SessionError("bad_request", `harness "${session.harnessName}" does not support steering`);
  return steering.mode === "queued" ? { queued: true } : {};
}

/**
 * The turn's harness once it has the turn's prompt. A steer waits for it before it is logged: one logged while the
 * harness starts would stay in the log, unheard, when the harness then fails to start.
 */
export async function promptedHarness(turn: RunningTurn): Promise<Harness> {
  const harness = await turn.prompted;
  if (!harness) throw steerTooLate();
  return harness;
}

export async function deliverSteer(turn: RunningTurn, harness: Harness, text: string): Promise<void> {
  try {
    await harness.steer(text, turn.id);
  } catch (err) {
    // A runner refuses a steer for a turn it has just finished; that end is handled within a macrotask.
    await new Promise((resolve) => setImmediate(resolve));
    throw turn.abort.signal.aborted ? steerTooLate() : err;
  }
}

/** Refuses a prompt while a turn runs or settles, saying when to prompt again. */
export function refuseWhileRunning(turn: RunningTurn | undefined): void {
  if (!turn) return;
  throw new SessionError(
    "conflict",
    turn.ended
      ? `turn ${turn.id} is settling: prompt again once its turn.settled is logged`
      : `turn ${turn.id} is still running: steer or interrupt it first`,
  );
}

/** Resolves once `run` has, or after `ms` at the latest (a harness that never ends a turn holds no one for good). */
export async function endedWithin(run: Promise<unknown> | undefined, ms: number): Promise<void> {
  if (!run) return;
  const timer = new AbortController();
  await Promise.race([run, sleep(ms, timer.signal)]);
  timer.abort();
}
