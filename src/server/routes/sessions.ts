// /v1: sessions, turns, answers, checkpoints, forks, control; the harnesses and agents on offer.
import {
  AgentList,
  AnswerBody,
  CheckpointView,
  ControlBody,
  ControlView,
  CreateSessionBody,
  EventPage,
  ForkBody,
  HandoffBody,
  HarnessList,
  Ok,
  PromptBody,
  ProviderList,
  RestoreBody,
  SessionList,
  SessionView,
  TextBody,
  TurnStartedBody,
  WhoAmI,
} from "../../protocol/api.js";
import { promptTooLarge } from "../../protocol/runner.js";
import type { AgentCatalog } from "../agents.js";
import { DEFAULT_TENANT } from "../auth/tokens.js";
import { ApiError } from "../errors.js";
import type { SessionService } from "../sessions.js";
import type { RouteContext, RouteDef } from "./route.js";

export interface SessionRoutesParts {
  sessions: SessionService;
  agents: AgentCatalog;
  auth: boolean;
}

const ok = { ok: true as const };

/** 413 for a text no runner frame could carry: refused here, before a turn starts or a shared runner sees it. */
function framable(text: string): string {
  const tooLarge = promptTooLarge(text);
  if (tooLarge) throw new ApiError("payload_too_large", tooLarge, "text");
  return text;
}
const id = (ctx: RouteContext) => ctx.params.id!;

/**
 * A non-negative integer from a query parameter or header, or a 400 naming it. Decimal digits only: Number()
 * would also take "1e3", "0x10" and " 7 ", and a number past 2^53 cannot name a seq exactly.
 */
export function seqParam(value: string | undefined, name: string): number {
  if (value === undefined || value === "") return 0;
  const n = /^[0-9]{1,16}$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(n)) {
    throw new ApiError(
      "bad_request",
      `${name} must be an event seq (a whole number ≥ 0), not "${value}"`,
      name,
    );
  }
  return n;
}

export function sessionRoutes({ sessions, agents, auth }: SessionRoutesParts): RouteDef[] {
  const harnesses = sessions.brain.harnesses;
  return [
    {
      method: "GET",
      path: "/v1/whoami",
      tag: "meta",
      summary: "The tenant and role of the token used",
      response: WhoAmI,
      handle: async ({ caller }) => ({ tenant: caller.tenant, role: caller.role, auth }),
    },
    {
      method: "GET",
      path: "/v1/harnesses",
      tag: "meta",
      summary: "The harnesses this daemon can run",
      response: HarnessList,
      handle: async () => ({
        harnesses: harnesses.names().map((name) => {
          const factory = harnesses.get(name);
          return { name, steering: factory.supportsSteering, images: factory.supportsImages === true };
        }),
      }),
    },
    {
      method: "GET",
      path: "/v1/providers",
      tag: "meta",
      summary:
        'The providers this token may name in POST /v1/sessions {"provider": name} (configured by the operator)',
      response: ProviderList,
      handle: async ({ caller }) => sessions.providers(caller),
    },
    {
      method: "GET",
      path: "/v1/agents",
      tag: "meta",
      summary: "The agent definitions a session can be created from",
      response: AgentList,
      handle: async () => ({ agents: await agents.list() }),
    },
    {
      method: "GET",
      path: "/v1/sessions",
      tag: "sessions",
      summary: "The sessions of the caller's tenant, oldest first",
      response: SessionList,
      handle: async ({ caller }) => ({ sessions: await sessions.list(caller) }),
    },
    {
      method: "POST",
      path: "/v1/sessions",
      tag: "sessions",
      summary:
        "Create a session on a harness or from an agent definition (its harness starts with the first prompt)",
      body: CreateSessionBody,
      response: SessionView,
      status: 201,
      drive: true,
      handle: async ({ caller, body }) => {
        const create = body as CreateSessionBody;
        // Ids are one namespace for every tenant: a tenant that could pick one would learn from a 409 that
        // another tenant holds it. Tenants get unguessable ids from the daemon; the default tenant may choose.
        if (create.id !== undefined && caller.tenant !== DEFAULT_TENANT) {
          throw new ApiError(
            "bad_request",
            `field "id": a token of tenant "${caller.tenant}" cannot choose session ids; leave "id" out and use the id the daemon returns`,
            "id",
          );
        }
        return sessions.create(caller, create);
      },
    },
    {
      method: "GET",
      path: "/v1/sessions/{id}",
      tag: "sessions",
      summary: "A session: its record, running turn, pending requests, last seq and controller",
      response: SessionView,
      handle: async ({ caller, ...ctx }) => sessions.view(caller, id(ctx as RouteContext)),
    },
    {
      method: "DELETE",
      path: "/v1/sessions/{id}",
      tag: "sessions",
      summary: "Delete a session and all its files (its watchers' streams end)",
      status: 204,
      drive: true,
      handle: async (ctx) => sessions.delete(ctx.caller, id(ctx)),
    },
    {
      method: "POST",
      path: "/v1/sessions/{id}/close",
      tag: "sessions",
      summary: "Release the session's harness; a later prompt reopens it",
      response: SessionView,
      drive: true,
      handle: async (ctx) => sessions.close(ctx.caller, id(ctx)),
    },
    {
      method: "POST",
      path: "/v1/sessions/{id}/prompt",
      tag: "turns",
      summary: "Start a turn; returns its id at once while the work goes on (watch /events)",
      body: PromptBody,
      response: TurnStartedBody,
      status: 202,
      drive: true,
      handle: async (ctx) => {
        const body = ctx.body as PromptBody;
        return sessions.prompt(ctx.caller, id(ctx), framable(body.text), body.images);
      },
    },
    {
      method: "POST",
      path: "/v1/sessions/{id}/steer",
      tag: "turns",
      summary: "Add text to the running turn (harnesses that support steering)",
      body: TextBody,
      response: Ok,
      status: 202,
      drive: true,
      handle: async (ctx) => {
        await sessions.steer(ctx.caller, id(ctx), framable((ctx.body as TextBody).text));
        return ok;
      },
    },
    {
      method: "POST",
      path: "/v1/sessions/{id}/interrupt",
      tag: "turns",
      summary: "Stop the running turn; it settles as interrupted",
      response: Ok,
      status: 202,
      drive: true,
      handle: async (ctx) => {
        await sessions.interrupt(ctx.caller, id(ctx));
        return ok;
      },
    },
    {
      method: "POST",
      path: "/v1/sessions/{id}/requests/{requestId}",
      tag: "turns",
      summary:
        'Answer a pending permission request ({"decision"}) or question ({"answer"}); a second answer gets 409',
      body: AnswerBody,
      response: Ok,
      drive: true,
      handle: async (ctx) => {
        await sessions.answer(ctx.caller, id(ctx), ctx.params.requestId!, ctx.body as AnswerBody);
        return ok;
      },
    },
    {
      method: "POST",
      path: "/v1/sessions/{id}/checkpoints",
      tag: "checkpoints",
      summary: "Checkpoint the session's native state (between turns)",
      response: CheckpointView,
      status: 201,
      drive: true,
      handle: async (ctx) => sessions.checkpoint(ctx.caller, id(ctx)),
    },
    {
      method: "POST",
      path: "/v1/sessions/{id}/fork",
      tag: "checkpoints",
      summary: "A new session that starts from a checkpoint of this one (default: the latest)",
      body: ForkBody,
      response: SessionView,
      status: 201,
      drive: true,
      handle: async (ctx) => sessions.fork(ctx.caller, id(ctx), (ctx.body as ForkBody).checkpoint),
    },
    {
      method: "POST",
      path: "/v1/sessions/{id}/handoff",
      tag: "sessions",
      summary:
        "A new session on another harness that continues this one's conversation (handoff_from links it); the original stays as it was",
      body: HandoffBody,
      response: SessionView,
      status: 201,
      drive: true,
      handle: async (ctx) => sessions.handoff(ctx.caller, id(ctx), ctx.body as HandoffBody),
    },
    {
      method: "POST",
      path: "/v1/sessions/{id}/restore",
      tag: "checkpoints",
      summary: "Write a checkpoint's native files into an empty directory on the daemon's machine",
      body: RestoreBody,
      response: Ok,
      drive: true,
      handle: async (ctx) => {
        const body = ctx.body as RestoreBody;
        await sessions.restore(ctx.caller, id(ctx), body.into, body.checkpoint);
        return ok;
      },
    },
    {
      method: "POST",
      path: "/v1/sessions/{id}/control",
      tag: "sessions",
      summary: "Take control of the session for a client id (the previous controller becomes an observer)",
      body: ControlBody,
      response: ControlView,
      drive: true,
      handle: async (ctx) => {
        return sessions.takeControl(ctx.caller, id(ctx), (ctx.body as ControlBody).client);
      },
    },
    {
      method: "GET",
      path: "/v1/sessions/{id}/log",
      tag: "events",
      summary: "A page of the session's durable events after a seq, as JSON",
      query: {
        after: "events with seq greater than this (default 0)",
        limit: "at most this many (default 1000)",
      },
      response: EventPage,
      handle: async (ctx) => {
        const after = seqParam(ctx.query("after"), "after");
        const limit = seqParam(ctx.query("limit"), "limit") || 1000;
        const live = await sessions.forWatching(ctx.caller, id(ctx));
        if (live) return { events: await live.log.read(after, limit), last_seq: live.log.lastSeq };
        const all = await sessions.fileEvents(id(ctx), 0, Number.POSITIVE_INFINITY);
        // The last event's seq, not the count: a compacted log has gaps in its seqs.
        return { events: all.filter((e) => e.seq > after).slice(0, limit), last_seq: all.at(-1)?.seq ?? 0 };
      },
    },
  ];
}
