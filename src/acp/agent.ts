// `brain acp`: an Agent Client Protocol agent, so an editor (Zed, ...) can drive any Brain harness. It talks to
// a daemon through the HTTP client: session/new creates a Brain session (harness or agent definition from
// `_meta.brain`, else the command line's choice), session/load replays its log, session/prompt starts a turn
// and streams its events as session/update until it settles, permission requests and questions go to the
// editor as session/request_permission (or elicitation), session/cancel interrupts.
import { randomUUID } from "node:crypto";
import {
  type AgentApp,
  agent,
  type ClientCapabilities,
  type McpServer,
  methods,
  PROTOCOL_VERSION,
  RequestError,
  type StopReason,
} from "@agentclientprotocol/sdk";
import type { BrainClient } from "../client/client.js";
import { ClientError } from "../client/errors.js";
import type { CreateSessionBody, SessionView } from "../protocol/api.js";
import { busyRefusal, interruptOthersTurn } from "./busy.js";
import { controlRefusal, isControlRefusal } from "./control.js";
import { followTurn, send } from "./follow.js";
import {
  brainMeta,
  newSessionField,
  promptField,
  promptOf,
  refuseBadSessionId,
  refuseMissingDir,
  refuseRelativeCwd,
} from "./params.js";
import { DaemonReach } from "./reach.js";
import { replayConversation } from "./replay.js";
import { mcpServersNotStarted, sessionUpdates } from "./updates.js";

export interface AcpOptions {
  /** The harness of new sessions when session/new's _meta names none. */
  harness?: string;
  /** Or an agent definition id. */
  agent?: string;
  version?: string;
  /**
   * Aborts when the editor's connection closes: a turn being followed is interrupted and no longer followed, since
   * no one is left to answer (and `brain acp`'s own daemon is going away, so the stream would retry for good).
   */
  editorGone?: AbortSignal;
  /** How long a prompt's turn is followed while the daemon cannot be reached (reach.ts; default 60 s). */
  daemonWaitMs?: number;
  /** How long a turn's event stream may bring nothing before it is taken as dropped (default 45 s, SILENCE_MS). */
  streamSilenceMs?: number;
}

/** The most sessions one session/list answer holds. */
const LIST_PAGE = 100;

/** A session/list cursor the daemon cannot page after: not one it gave, or its session deleted since. */
function badCursor(cursor: string | undefined): RequestError {
  return RequestError.invalidParams({
    message: `cursor ${JSON.stringify(String(cursor).slice(0, 100))} is not a nextCursor this agent gave, or its session was deleted since: list again without a cursor`,
    field: "cursor",
  });
}

const STOP: Record<string, StopReason> = { completed: "end_turn", interrupted: "cancelled" };

/**
 * A completed turn cut short, by its last message's stop_reason (each family's word for it): ACP has a reason for
 * each, and an editor told end_turn shows a cut-off answer as a whole one. (A refusal stays end_turn: ACP's
 * `refusal` tells the editor the prompt is gone from the context, and Brain's harnesses keep it.)
 */
const CUT_SHORT: Record<string, StopReason> = {
  max_tokens: "max_tokens", // Anthropic, claude-code, ACP agents
  length: "max_tokens", // the AI SDK (api), OpenAI, pi, opencode
  max_steps: "max_turn_requests", // the api harness's config.options.max_steps
  max_turn_requests: "max_turn_requests", // ACP agents
};

export function brainAcpAgent(client: BrainClient, options: AcpOptions = {}): AgentApp {
  let capabilities: ClientCapabilities = {};
  const reach = new DaemonReach(client.url, options.daemonWaitMs, options.streamSilenceMs);
  /** The MCP servers session/new named and Brain did not start, per session, until its first prompt says so. */
  const unstarted = new Map<string, string[]>();
  /**
   * The session/prompts in progress per session, each aborted by session/cancel (and session/close). A set: an
   * editor may send a second prompt while the first runs (the daemon refuses it), and a cancel then is for both, not
   * only the latest.
   */
  const prompting = new Map<string, Set<Prompting>>();
  /**
   * Per session, a session/cancel of a turn this agent did not start (another client's), until that turn settles:
   * true if it ran on past the wait. A prompt sent right after the cancel waits for it, as for a cancelled own one.
   */
  const othersCancelled = new Map<string, Promise<boolean>>();

  const noteUnstarted = (sessionId: string, servers: McpServer[] | undefined) => {
    if (servers?.length)
      unstarted.set(
        sessionId,
        servers.map((server) => server.name),
      );
  };

  /** The daemon's refusal as ACP's error; `rename` gives a field of the daemon's body its name in the request. */
  const fail = (err: unknown, rename?: (field: string) => string): never => {
    const unreachable = reach.refusalFor(err);
    if (unreachable) throw unreachable;
    if (err instanceof ClientError) {
      if (err.status === 404) throw new RequestError(-32002, "Resource not found", { message: err.message });
      if (err.status === 400 || err.status === 413) {
        const field = err.field !== undefined && rename ? rename(err.field) : err.field;
        const message =
          field === err.field ? err.message : err.message.replaceAll(`"${err.field}"`, `"${field}"`);
        throw RequestError.invalidParams({ message, field });
      }
      throw RequestError.internalError({ message: err.message, status: err.status });
    }
    throw err;
  };

  return agent({ name: "brain" })
    .onRequest(methods.agent.initialize, async ({ params }) => {
      capabilities = params.clientCapabilities ?? {};
      return {
        // ACP: a version the agent does not support is answered with the latest it does; Brain speaks only its own.
        protocolVersion: PROTOCOL_VERSION,
        agentCapabilities: {
          loadSession: true,
          // Images go to the harness; one that takes none refuses them (invalid params, named).
          promptCapabilities: { image: true, audio: false, embeddedContext: true },
          // Each one it serves: an editor calls none it is not told of (session/close was served and never sent).
          sessionCapabilities: { list: {}, close: {} },
        },
        authMethods: [],
        agentInfo: { name: "brain", title: "Brain", version: options.version ?? "0.0.0" },
      };
    })
    .onRequest(methods.agent.session.new, async ({ params }) => {
      refuseRelativeCwd(params.cwd);
      const meta = brainMeta(params._meta);
      // The command line's choice only when the editor named neither.
      const named = meta.harness !== undefined || meta.agent !== undefined;
      const body: CreateSessionBody = {
        ...meta,
        ...(!named && options.harness ? { harness: options.harness } : {}),
        ...(!named && options.agent ? { agent: options.agent } : {}),
        // In the session's record, not this process's memory: session/list and session/load after a restart.
        editor_cwd: params.cwd,
      };
      // Keyed, one key per request: the client asks again a create or prompt the daemon died holding (a restart),
      // and the daemon, finding the key, makes one session and runs one turn.
      await reach.reached();
      const view = await client
        .create(body, { key: randomUUID() })
        .catch((err) => fail(err, (field) => newSessionField(params._meta, field)));
      reach.back();
      noteUnstarted(view.id, params.mcpServers);
      return { sessionId: view.id, _meta: { brain: { harness: view.harness } } };
    })
    .onRequest(methods.agent.session.load, async ({ params, client: editor, signal }) => {
      refuseBadSessionId(params.sessionId);
      await reach.reached();
      const view = await client.session(params.sessionId).catch(fail);
      reach.back();
      refuseMissingDir(params.cwd);
      // An editor gives its MCP servers again at each load (ACP: the agent connects to them), so it is told again.
      noteUnstarted(view.id, params.mcpServers);
      const updates = sessionUpdates({ replaying: true, notices: false });
      // Withdrawn ($/cancel_request): the editor wants no more of it, and a long log went on to its end regardless.
      await replayConversation(client, view, (event) => {
        signal.throwIfAborted();
        return send(editor, view.id, updates(event));
      });
      return {};
    })
    .onRequest(methods.agent.session.list, async ({ params }) => {
      if (params.cwd) refuseRelativeCwd(params.cwd);
      // Paged, newest first (what an editor shows): the whole list was one message of every session's view, each
      // with its config, however many thousands the home holds. The cursor is the daemon's: the last session seen.
      const sessions: SessionView[] = [];
      let after = params.cursor ?? undefined;
      await reach.reached();
      do {
        const page = await client
          .sessionPage({ limit: LIST_PAGE - sessions.length, order: "newest", ...(after ? { after } : {}) })
          .catch((err) => fail(err instanceof ClientError && err.field === "after" ? badCursor(after) : err));
        sessions.push(...page.sessions.filter((s) => !params.cwd || s.editor_cwd === params.cwd));
        after = page.next;
      } while (after !== undefined && sessions.length < LIST_PAGE);
      return {
        sessions: sessions.map((s) => ({
          sessionId: s.id,
          // A session no editor made (`brain run`, REST) has no directory of its own: "/", as ACP needs one.
          cwd: s.editor_cwd ?? "/",
          title: `${s.harness} ${s.id.slice(0, 8)}`,
          // The log's last write, so an editor's recent-first list is by activity, not by creation.
          updatedAt: s.updated_at ?? s.created_at,
        })),
        ...(after !== undefined ? { nextCursor: after } : {}),
      };
    })
    .onRequest(methods.agent.session.close, async ({ params }) => {
      refuseBadSessionId(params.sessionId);
      // ACP: close cancels the session's work as session/cancel does, so its prompts answer cancelled. Each is
      // waited for first: a prompt on its way to the daemon reached it after the close and was refused (an
      // internal error to the editor), or reopened the session and ran its turn to the end.
      const prompts = [...(prompting.get(params.sessionId) ?? [])];
      for (const prompt of prompts) prompt.cancel.abort();
      await Promise.all(prompts.map((prompt) => prompt.answered));
      await reach.reached();
      await client.close(params.sessionId, { key: randomUUID() }).catch(fail);
      return {};
    })
    .onRequest(methods.agent.session.prompt, async ({ params, client: editor, signal }) => {
      const { sessionId } = params;
      refuseBadSessionId(sessionId);
      // Registered before the first await: the SDK hands messages to their handlers in the order they arrive, so a
      // session/cancel sent right after this prompt finds it even while the turn has not reached the daemon yet.
      // $/cancel_request on this request (its signal) cancels the same way.
      const cancel = new AbortController();
      const onAbort = () => cancel.abort();
      signal.addEventListener("abort", onAbort, { once: true });
      let answer = () => {};
      const entry: Prompting = { cancel, answered: new Promise<void>((resolve) => (answer = resolve)) };
      const inProgress = prompting.get(sessionId) ?? new Set<Prompting>();
      // An editor's "stop and send" (session/cancel, then this prompt at once): the cancelled turn runs until the
      // interrupt lands and settles, and the daemon refused a prompt that came before (409), so this one waits.
      const cancelled = [...inProgress].filter((p) => p.cancel.signal.aborted).map((p) => p.answered);
      const othersTurn = othersCancelled.get(sessionId);
      prompting.set(sessionId, inProgress.add(entry));
      try {
        const { text, images } = promptOf(params.prompt);
        await Promise.all(cancelled);
        const cancelUnheeded = (await othersTurn) ?? false;
        // A daemon a prompt gave up on as hung is asked for a moment first, not the whole answer timeout (reach.ts).
        await reach.reached();
        const view = await client.session(sessionId).catch(fail);
        reach.back();
        if (cancel.signal.aborted) return { stopReason: "cancelled" as const }; // cancelled before it started
        const notStarted = unstarted.get(sessionId);
        if (notStarted) {
          unstarted.delete(sessionId);
          const notices = Boolean(capabilities.session?.notices);
          await send(editor, sessionId, [mcpServersNotStarted(notStarted, notices)]);
        }
        const after = view.last_seq ?? 0;
        const { turn } = await client.prompt(sessionId, text, images, { key: randomUUID() }).catch((err) => {
          const ownPrompt = [...inProgress].some((p) => p !== entry && !p.cancel.signal.aborted);
          const busy = busyRefusal(err, { sessionId, ownPrompt, cancelUnheeded });
          const controlled = controlRefusal(err, sessionId, "prompt");
          return fail(busy ?? controlled ?? err, (field) => promptField(params.prompt, field));
        });
        const status = await followTurn(client, editor, sessionId, turn, after, {
          capabilities,
          cancel: cancel.signal,
          ...(options.editorGone ? { editorGone: options.editorGone } : {}),
          reach,
        }).catch(fail);
        // ACP: after a cancel the prompt MUST end cancelled, even if the turn finished before the interrupt landed.
        if (cancel.signal.aborted) return { stopReason: "cancelled" as const };
        const stop =
          status.status === "completed"
            ? (CUT_SHORT[status.stopReason ?? ""] ?? "end_turn")
            : STOP[status.status];
        if (!stop) {
          throw RequestError.internalError({
            message: status.message ?? "the turn failed",
            code: status.code,
          });
        }
        return { stopReason: stop };
      } catch (err) {
        // ACP: after a cancel the prompt answers cancelled, errors too (the daemon refusing a prompt that reached it
        // after the cancel, say: the editor, told of an error, shows one for a turn it had stopped). Not when the
        // cancel was refused because another client drives the session: the turn it asked to stop goes on.
        if (cancel.signal.aborted && !isControlRefusal(err)) return { stopReason: "cancelled" as const };
        throw err;
      } finally {
        signal.removeEventListener("abort", onAbort);
        inProgress.delete(entry);
        answer();
        if (inProgress.size === 0 && prompting.get(sessionId) === inProgress) prompting.delete(sessionId);
      }
    })
    .onNotification(methods.agent.session.cancel, async ({ params }) => {
      const prompts = prompting.get(params.sessionId);
      if (prompts) for (const prompt of prompts) prompt.cancel.abort();
      else {
        // A turn this agent did not start (another client's): interrupted, and followed to its end for the prompt
        // that may come next. Registered before any await, as a prompt's entry is.
        const settled = interruptOthersTurn(client, params.sessionId, options.editorGone);
        othersCancelled.set(params.sessionId, settled);
        await settled.finally(() => {
          if (othersCancelled.get(params.sessionId) === settled) othersCancelled.delete(params.sessionId);
        });
      }
    });
}

/** A session/prompt in progress: aborted by session/cancel or session/close; `answered` once it has its answer. */
interface Prompting {
  cancel: AbortController;
  answered: Promise<void>;
}
