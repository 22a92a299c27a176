// /v1: sessions, turns, answers, checkpoints, forks, control; the harnesses and agents on offer.
import type { ServerResponse } from "node:http";
import { pageBeforeDamage } from "../../core/event-log.js";
import {
  type AnswerBody,
  type ControlBody,
  type CreateSessionBody,
  type ForkBody,
  type HandoffBody,
  MAX_EVENT_PAGE,
  type PromptBody,
  type RestoreBody,
  SessionListQuery,
  type TextBody,
} from "../../protocol/api.js";
import { ENDPOINTS } from "../../protocol/endpoints.js";
import { configTooLarge, promptTooLarge } from "../../protocol/runner.js";
import type { AgentCatalog } from "../agents.js";
import { DEFAULT_TENANT } from "../auth/tokens.js";
import { ApiError, parseBody } from "../errors.js";
import { IDEMPOTENCY_HEADER, idempotencyKey } from "../idempotency.js";
import type { LogReads } from "../log-reads.js";
import { streamedList } from "../session-list.js";
import type { SessionService } from "../sessions.js";
import type { RouteContext, RouteDef } from "./route.js";

export interface SessionRoutesParts {
  sessions: SessionService;
  agents: AgentCatalog;
  auth: boolean;
  logReads: LogReads;
  /** An error message as a client may see it: the daemon's home and the host's secrets taken out. */
  shown: (message: string) => string;
}

const ok = { ok: true as const };

/** 413 for a text no runner frame could carry: refused here, before a turn starts or a shared runner sees it. */
function framable(text: string): string {
  const tooLarge = promptTooLarge(text);
  if (tooLarge) throw new ApiError("payload_too_large", tooLarge, "text");
  return text;
}

/** 413 for a session config no runner's open frame could carry: refused before it is stored. */
function openable(config: unknown, field: string): void {
  const tooLarge = configTooLarge(config);
  if (tooLarge) throw new ApiError("payload_too_large", tooLarge, field);
}
const id = (ctx: RouteContext) => ctx.params.id!;
const keyOf = (ctx: RouteContext) => idempotencyKey(ctx.header(IDEMPOTENCY_HEADER));

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

/** `?force=`: "true" or "false" (or absent), or a 400: a misspelt value must not delete what it meant to keep. */
function forceParam(value: string | undefined): boolean {
  if (value === undefined || value === "" || value === "false") return false;
  if (value === "true") return true;
  throw new ApiError("bad_request", `force must be "true" or "false", not "${value.slice(0, 100)}"`, "force");
}

/**
 * 400 for a cursor past the session's last event. Taken, it skipped every event up to it without a word: a client
 * whose session was deleted and made again under its id (or that sent another session's cursor) waited on a
 * stream that said nothing, or paged an empty log, until the new log grew past where the old one ended. Every
 * node compares with the acknowledged log (a cluster's stream leader), which holds whatever a client was sent.
 */
export function refusePastEnd(session: string, after: number, last: number, name: string): void {
  if (after <= last) return;
  throw new ApiError(
    "bad_request",
    `${name} ${after} is past the end of session ${session}'s log, whose last event is ${last}: the cursor is from another session, or from one deleted and made again under this id; resume from ${last} or less (0 replays the whole log)`,
    name,
  );
}

/** A log page's size: 1000 by default (also for 0), at most MAX_EVENT_PAGE, or a 400 naming `limit`. */
function pageLimit(value: string | undefined): number {
  if (value !== undefined && !/^[0-9]+$/.test(value)) {
    // Not seqParam's message: a page size is not an event seq.
    throw new ApiError(
      "bad_request",
      `limit must be a whole number of events a page, at most ${MAX_EVENT_PAGE}, not "${value}"`,
      "limit",
    );
  }
  const limit = seqParam(value, "limit") || 1000;
  if (limit > MAX_EVENT_PAGE) {
    throw new ApiError(
      "bad_request",
      `limit must be at most ${MAX_EVENT_PAGE} events a page, not ${limit}; read on with ?after= the last seq of the page`,
      "limit",
    );
  }
  return limit;
}

export function sessionRoutes({ sessions, agents, auth, logReads, shown }: SessionRoutesParts): RouteDef[] {
  const harnesses = sessions.brain.harnesses;
  return [
    {
      ...ENDPOINTS.whoami,
      handle: async ({ caller }) => ({ tenant: caller.tenant, role: caller.role, auth }),
    },
    {
      ...ENDPOINTS.harnesses,
      handle: async () => ({
        harnesses: harnesses.names().map((name) => {
          const factory = harnesses.get(name);
          return { name, steering: factory.supportsSteering, images: factory.supportsImages === true };
        }),
      }),
    },
    {
      ...ENDPOINTS.providers,
      handle: async ({ caller }) => sessions.providers(caller),
    },
    {
      ...ENDPOINTS.agents,
      handle: async () => ({ agents: await agents.list() }),
    },
    {
      ...ENDPOINTS.sessions,
      handle: async ({ caller, query }) => {
        const given = (name: string) => query(name) || undefined;
        const page = { limit: given("limit"), after: given("after"), order: given("order") };
        const { items, next } = await sessions.list(
          caller,
          parseBody(SessionListQuery, page, "query parameter"),
        );
        const listed = items.map((s) => ("error" in s ? { id: s.id, error: s.error } : { id: s.id }));
        return streamedList(listed, next, (id) => sessions.listedView(caller, id), shown);
      },
    },
    {
      ...ENDPOINTS.create,
      handle: async (ctx) => {
        const { caller } = ctx;
        const create = ctx.body as CreateSessionBody;
        // Ids are one namespace for every tenant: a tenant that could pick one would learn from a 409 that
        // another tenant holds it. Tenants get unguessable ids from the daemon; the default tenant may choose.
        if (create.id !== undefined && caller.tenant !== DEFAULT_TENANT) {
          throw new ApiError(
            "bad_request",
            `field "id": a token of tenant "${caller.tenant}" cannot choose session ids; leave "id" out and use the id the daemon returns`,
            "id",
          );
        }
        if (create.config) openable(create.config, "config");
        return sessions.create(caller, create, keyOf(ctx));
      },
    },
    {
      ...ENDPOINTS.session,
      handle: async ({ caller, ...ctx }) => sessions.viewWithNativeDisk(caller, id(ctx as RouteContext)),
    },
    {
      ...ENDPOINTS.delete,
      handle: async (ctx) => sessions.delete(ctx.caller, id(ctx), keyOf(ctx), forceParam(ctx.query("force"))),
    },
    {
      ...ENDPOINTS.close,
      handle: async (ctx) => {
        // Closing twice is not an error: a retry under the key gets the same answer; the key is checked all the same.
        keyOf(ctx);
        return sessions.close(ctx.caller, id(ctx));
      },
    },
    {
      ...ENDPOINTS.prompt,
      handle: async (ctx) => {
        const body = ctx.body as PromptBody;
        return sessions.prompt(ctx.caller, id(ctx), framable(body.text), body.images, keyOf(ctx));
      },
    },
    {
      ...ENDPOINTS.steer,
      handle: async (ctx) => {
        await sessions.steer(ctx.caller, id(ctx), framable((ctx.body as TextBody).text), keyOf(ctx));
        return ok;
      },
    },
    {
      ...ENDPOINTS.interrupt,
      handle: async (ctx) => {
        await sessions.interrupt(ctx.caller, id(ctx), keyOf(ctx));
        return ok;
      },
    },
    {
      ...ENDPOINTS.answer,
      handle: async (ctx) => {
        const key = keyOf(ctx);
        await sessions.answer(ctx.caller, id(ctx), [[ctx.params.requestId!, ctx.body as AnswerBody]], {
          ...(key ? { key } : {}),
        });
        return ok;
      },
    },
    {
      ...ENDPOINTS.checkpoint,
      handle: async (ctx) => sessions.checkpoint(ctx.caller, id(ctx), keyOf(ctx)),
    },
    {
      ...ENDPOINTS.fork,
      handle: async (ctx) => sessions.fork(ctx.caller, id(ctx), ctx.body as ForkBody, keyOf(ctx)),
    },
    {
      ...ENDPOINTS.handoff,
      handle: async (ctx) => {
        const body = ctx.body as HandoffBody;
        if (body.model) openable({ model: body.model }, "model");
        return sessions.handoff(ctx.caller, id(ctx), body, keyOf(ctx));
      },
    },
    {
      ...ENDPOINTS.rebuild,
      handle: async (ctx) => sessions.rebuild(ctx.caller, id(ctx), keyOf(ctx)),
    },
    {
      ...ENDPOINTS.restore,
      handle: async (ctx) => {
        const body = ctx.body as RestoreBody;
        return {
          ok: true,
          checkpoint: await sessions.restore(ctx.caller, id(ctx), body, keyOf(ctx)),
        };
      },
    },
    {
      ...ENDPOINTS.control,
      handle: async (ctx) => {
        return sessions.takeControl(ctx.caller, id(ctx), (ctx.body as ControlBody).client, keyOf(ctx));
      },
    },
    {
      ...ENDPOINTS.log,
      handle: async (ctx) => {
        const after = seqParam(ctx.query("after"), "after");
        const limit = pageLimit(ctx.query("limit"));
        const live = await sessions.forWatching(ctx.caller, id(ctx));
        // Before the page is read: it is what an unread answer would hold.
        logReads.begin(ctx.caller.tenant, ctx.env?.outgoing as ServerResponse | undefined);
        const first = (n: number) => (n > 1 ? { first_seq: n } : {});
        if (live) {
          refusePastEnd(id(ctx), after, live.log.lastSeq, "after");
          const events = await pageBeforeDamage(() => live.log.read(after, limit));
          return { events, last_seq: live.log.lastSeq, ...first(live.log.firstSeq ?? 1) };
        }
        // A cursor read and the log's tail, never the whole log. The events first: should another process be
        // writing the log, last_seq is then never below the last event returned. A log damaged in the middle
        // pages up to the damage, and the page that starts there fails naming it (pageBeforeDamage).
        const events = await pageBeforeDamage(() => sessions.fileEvents(id(ctx), after, limit));
        const bounds = await sessions.seqBounds(id(ctx));
        refusePastEnd(id(ctx), after, bounds.last, "after");
        return { events, last_seq: bounds.last, ...first(bounds.first) };
      },
    },
  ];
}
