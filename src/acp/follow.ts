// One turn of a session/prompt followed on the daemon's event stream: its events to the editor as session/updates,
// its permission requests and questions asked of the editor, until its turn.settled. Across a lost daemon the stream
// reconnects (reach.ts) and goes on from the last event given; one gone past the wait ends the prompt with why.
import {
  type AgentContext,
  type ClientCapabilities,
  methods,
  type SessionUpdate,
} from "@agentclientprotocol/sdk";
import type { BrainClient } from "../client/client.js";
import { ClientError } from "../client/errors.js";
import { controlRefusal } from "./control.js";
import { type DaemonReach, daemonError, RECONNECT_MS } from "./reach.js";
import { askEditor } from "./requests.js";
import { sessionUpdates } from "./updates.js";

export interface FollowOptions {
  capabilities: ClientCapabilities;
  /** session/cancel or $/cancel_request: interrupt the turn, follow it to its end. */
  cancel: AbortSignal;
  /** The editor went away: interrupt the turn and stop following it. */
  editorGone?: AbortSignal;
  /** The daemon's reachability: a stream that cannot reconnect within its waitMs ends the prompt. */
  reach: DaemonReach;
}

/**
 * Streams one turn's events to the editor and answers its requests through it; resolves when it settles. When
 * `cancel` aborts, the turn is interrupted and still followed to its turn.settled, so the prompt is answered only
 * once the daemon has stopped it. When `editorGone` aborts, the turn is interrupted and left at once.
 */
export async function followTurn(
  client: BrainClient,
  editor: AgentContext,
  sessionId: string,
  turn: string,
  after: number,
  { capabilities, cancel, editorGone, reach }: FollowOptions,
): Promise<{ status: string; message?: string; code?: string; stopReason?: string }> {
  const stop = new AbortController();
  /** Why the turn is no longer followed though it has not settled: the prompt is answered with it. */
  let leftBecause: Error | undefined;
  let interrupting = false;
  const interrupt = () => {
    if (interrupting) return;
    interrupting = true;
    void client.interrupt(sessionId).catch((err) => {
      // Settled already (or interrupted by someone else): the interrupt is refused, and turn.settled comes anyway.
      // A daemon out of reach sends no turn.settled: the stream would retry for as long as it is gone, and ACP
      // wants the prompt answered (cancelled) after a cancel, so it is left.
      if (err instanceof ClientError && err.status === 0) stop.abort();
      // Another client took control of the session since this prompt started its turn: the turn goes on, driven
      // from there, and the editor is told so now rather than after the turn it asked to stop.
      const controlled = controlRefusal(err, sessionId, "cancel");
      if (controlled) {
        leftBecause = controlled;
        stop.abort();
      }
    });
  };
  const leave = () => {
    interrupt();
    stop.abort();
  };
  if (cancel.aborted) interrupt();
  else cancel.addEventListener("abort", interrupt, { once: true });
  if (editorGone?.aborted) leave();
  else editorGone?.addEventListener("abort", leave, { once: true });
  const asked = new Map<string, AbortController>();
  const updates = sessionUpdates({ replaying: false, notices: Boolean(capabilities.session?.notices) });
  let stopReason: string | undefined;
  // Lost: the stream reconnects (backing off) for reach.waitMs from the drop, then the prompt ends saying why, by
  // what its last try got: no connection (unreachable, and later requests fail at once), or the daemon's own error.
  let lostTimer: NodeJS.Timeout | undefined;
  /** Since when the daemon has answered each try with an error; undefined while the last try found no daemon. */
  let refusing: { answered: ClientError; since: Date } | undefined;
  /** Since when no try has found the daemon (the first of this run of failed connections). */
  let unreachableSince: Date | undefined;
  /**
   * The last try got no answer (timed out), or is still waiting for one when the wait ends (a try on a hung daemon
   * waits the whole answer timeout, as long as the wait by default): later requests probe it first (reach.ts).
   */
  let hung = false;
  const onRetry = () => {
    hung = true;
  };
  const onDrop = (_lastSeq: number, _reason: string, error?: ClientError) => {
    hung = error?.code === "timeout";
    if (error && error.status > 0) {
      unreachableSince = undefined;
      refusing = { answered: error, since: refusing?.since ?? new Date() };
    } else {
      refusing = undefined;
      unreachableSince ??= new Date();
    }
    lostTimer ??= setTimeout(() => {
      if (refusing) {
        leftBecause = daemonError(reach.url, sessionId, refusing.answered, refusing.since);
        // It answers: the turn is not to run on unseen, its requests asked of no one (as for a 4xx below).
        interrupt();
      } else {
        reach.lost(unreachableSince, hung);
        leftBecause = reach.refusal();
      }
      stop.abort();
    }, reach.waitMs);
  };
  const onReconnect = () => {
    clearTimeout(lostTimer);
    lostTimer = undefined;
    refusing = undefined;
    unreachableSince = undefined;
    hung = false;
    reach.back();
  };
  const stream = client.events(sessionId, {
    after,
    signal: stop.signal,
    silenceMs: reach.silenceMs,
    retryMs: RECONNECT_MS.first,
    maxRetryMs: RECONNECT_MS.max,
    onDrop,
    onRetry,
    onReconnect,
  });
  try {
    for await (const event of stream) {
      if (event.turn !== turn) continue;
      await send(editor, sessionId, updates(event));
      if (event.type === "assistant.message") stopReason = event.data.stop_reason;
      // After session/cancel the turn's requests are cancelled (the interrupt, on its way, denies them): one raised
      // before the interrupt landed was asked of the editor, which had closed the turn, and its answer was taken.
      if ((event.type === "permission.requested" || event.type === "question.requested") && !cancel.aborted) {
        const withdraw = new AbortController();
        asked.set(event.data.id, withdraw);
        // By the call's id: by its tool's name, two calls of one tool at once had the request on the other's card.
        const toolCallId = event.type === "permission.requested" ? event.data.tool_call_id : undefined;
        void askEditor(editor, sessionId, event, { capabilities, signal: withdraw.signal, toolCallId }).then(
          async (answer) => {
            // An answer that comes after the cancel (an editor that allowed as it cancelled) would race the interrupt.
            if (answer && !cancel.aborted)
              await client.answer(sessionId, event.data.id, answer).catch(() => {}); // answered elsewhere first
          },
        );
      }
      if (event.type === "permission.resolved" || event.type === "question.answered") {
        asked.get(event.data.id)?.abort();
        asked.delete(event.data.id);
      }
      if (event.type === "turn.settled") {
        const error = event.data.error;
        const why = error ? { message: error.message, code: error.code } : {};
        return { status: event.data.status, ...why, ...(stopReason ? { stopReason } : {}) };
      }
    }
    if (leftBecause) throw leftBecause;
    return { status: "interrupted" };
  } catch (err) {
    if (err === leftBecause) throw err;
    // No longer followed (the daemon refused the stream: the tenant's streams all taken, a token revoked): the prompt
    // is answered with the error, so the turn must not run on unseen, its requests asked of no one.
    interrupt();
    throw err;
  } finally {
    clearTimeout(lostTimer);
    cancel.removeEventListener("abort", interrupt);
    editorGone?.removeEventListener("abort", leave);
    stop.abort();
    for (const withdraw of asked.values()) withdraw.abort();
  }
}

export async function send(editor: AgentContext, sessionId: string, updates: SessionUpdate[]): Promise<void> {
  for (const update of updates) await editor.notify(methods.client.session.update, { sessionId, update });
}
