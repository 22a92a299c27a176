// The daemon's HTTP API (`brain serve`): request and response bodies under /v1, and the token file. The routes
// validate with these schemas and the OpenAPI document is generated from them, so the two never disagree. nui's
// HITL envelopes (served under /api/hitl) are in ./nui/hitl.ts.
import { z } from "zod";
import { PROVIDER_NAME, ProviderName } from "./config.js";
import { SessionEvent } from "./events.js";
import { PermissionPolicy } from "./permissions.js";
import { SessionConfig } from "./runner.js";
import { SESSION_ID_PATTERN, SessionId, SessionRecord } from "./session.js";

// ---- errors ----------------------------------------------------------------------------------------------

export const ApiErrorCode = z.enum([
  "bad_request",
  "unauthorized",
  "forbidden",
  "not_found",
  /**
   * The path exists but does not take the request's method (RFC 9110 §15.5.6): 405, with an Allow header listing
   * the methods it takes; the message names the method, the path and those methods.
   */
  "method_not_allowed",
  "conflict",
  /**
   * An Idempotency-Key sent again with another request (another body, another command or subject): 422, as the
   * IETF Idempotency-Key draft answers a key reused with a different payload. A retry sends the same request; a
   * new request takes a new key.
   */
  "idempotency_key_reused",
  "payload_too_large",
  "unsupported_media_type",
  "brain_error",
  /** Cluster mode: the session's owner did not answer while its lease stayed alive; retry with the same key. */
  "unavailable",
  /** Cluster mode: the session's harness state lives on one node only and cannot be taken over elsewhere. */
  "pinned",
  /** A bound the operator set is reached (sessions open per tenant): the message names it and what to do. */
  "limit_reached",
  /** The host's disk is full: the request was not taken, what was acknowledged before stays; free space, send again. */
  "insufficient_storage",
]);
export const ApiErrorBody = z.strictObject({
  error: z.strictObject({
    code: ApiErrorCode,
    message: z.string(),
    /** The request field at fault (`config.model`, `text`), when one is. */
    field: z.string().optional(),
    /**
     * Why a 409 `conflict` was refused, for a client to act on without reading the message: `controlled`,
     * another client holds the session's control lease (`controller` names it).
     */
    reason: z.enum(["controlled"]).optional(),
    /** With reason `controlled`: the client id (its X-Brain-Client) that controls the session. */
    controller: z.string().optional(),
  }),
});

// ---- sessions --------------------------------------------------------------------------------------------

export const CreateSessionBody = z.strictObject({
  /** A harness name from GET /v1/harnesses. Default: the config's `defaults.harness`. */
  harness: z.string().min(1).optional(),
  /** An agent definition id from GET /v1/agents, instead of `harness`: its settings are the defaults. */
  agent: z.string().min(1).optional(),
  /** Choose the id; by default a UUID. */
  id: SessionId.optional(),
  config: SessionConfig.optional(),
  /**
   * One of the providers the operator configured, by name (GET /v1/providers lists the ones this token may use).
   * Default: the agent's, then the config's `defaults.provider`.
   */
  provider: z
    .string({
      error: 'name a provider: "provider": "<name>" from GET /v1/providers (inline settings are refused)',
    })
    .regex(PROVIDER_NAME, "a provider name is 1 to 64 letters, digits, '_', '.' or '-'")
    .optional(),
  permissions: PermissionPolicy.optional(),
  /** An ACP editor's working directory (`brain acp` sets it): recorded only, as the session's `editor_cwd`. */
  editor_cwd: z
    .string()
    .min(1)
    .max(4096, "an editor's working directory is at most 4096 characters")
    .refine((cwd) => !cwd.includes("\0"), "an editor's working directory holds no NUL character")
    .optional(),
});

export const PendingRequestView = z.strictObject({
  kind: z.enum(["tool.call", "permission.requested", "question.requested"]),
  id: z.string(),
  turn: z.string().optional(),
  data: z.record(z.string(), z.unknown()),
});

/** What a session's native state takes on the disk of the daemon that answers (src/core/native-disk.ts). */
export const NativeDiskView = z.strictObject({
  /** Bytes of the files under the native dir (the agent's `work` dir, when it is there, included). */
  native_bytes: z.number().int().nonnegative(),
  /** Bytes of the folders a rebuild keeps (or, cut short, left) beside the native dir. */
  rebuild_aside_bytes: z.number().int().nonnegative(),
  /** Directories and files that could not be read (another user's, in a container session): not in the sums. */
  unreadable: z.number().int().positive().optional(),
});

/** A session record and what is live about it. */
export const SessionView = SessionRecord.extend({
  /**
   * When the session's log was last written (ISO 8601): its last activity. Absent when the store cannot tell; a
   * log written by no one yet dates from its creation.
   */
  updated_at: z.string().optional(),
  /** The running turn, if one is. */
  active_turn: z.string().optional(),
  /** Seq of the last durable event (in a list, only for sessions the daemon has open). */
  last_seq: z.number().int().nonnegative().optional(),
  /** Requests waiting for an answer (permissions, questions) or a result (tool calls); as last_seq. */
  pending: z.array(PendingRequestView).optional(),
  /** The client id holding control, when one does (see POST /v1/sessions/{id}/control). */
  controller: z.string().optional(),
  /**
   * What its native state takes on the answering daemon's disk (in a cluster, that node's copy). Only in GET
   * /v1/sessions/{id}: a list, or a command's answer, would walk a native dir per session for it.
   */
  native_disk: NativeDiskView.optional(),
});

/** A listed session whose stored record the daemon cannot read: its id, and the error naming the file and the fix. */
export const UnreadableSessionView = z.strictObject({
  id: z.string(),
  error: ApiErrorBody.shape.error,
});

export const SessionList = z.strictObject({
  sessions: z.array(SessionView),
  /** The page's sessions whose records cannot be read (damaged, unreadable): left out of `sessions`. */
  unreadable: z.array(UnreadableSessionView).optional(),
  /** Only when a `limit` left sessions out: pass it as `?after=` for the next page. */
  next: z.string().optional(),
});

/** The most sessions one page of GET /v1/sessions holds. */
export const MAX_SESSION_PAGE = 1000;

/** The most events one page of GET /v1/sessions/{id}/log holds (default 1000): a page is read whole into memory. */
export const MAX_EVENT_PAGE = 10_000;

const pageSize = `must be a whole number from 1 to ${MAX_SESSION_PAGE}`;

/**
 * GET /v1/sessions's query: `?limit=N` pages the caller's sessions (oldest first, or newest first with
 * `?order=newest`: a UI shows the latest without reading the rest), `?after=ID` starts after that session (the
 * `next` of the page before, in the same order). Without them, every session at once.
 */
export const SessionListQuery = z.object({
  limit: z
    .string()
    .regex(/^[0-9]{1,7}$/, pageSize)
    .transform(Number)
    .pipe(z.number().min(1, pageSize).max(MAX_SESSION_PAGE, pageSize))
    .optional(),
  after: z
    .string()
    .regex(SESSION_ID_PATTERN, "must be a session id (the `next` of the page before)")
    .optional(),
  order: z.enum(["oldest", "newest"], { message: 'must be "oldest" (the default) or "newest"' }).optional(),
});

export const Ok = z.strictObject({ ok: z.literal(true) });

export const TextBody = z.strictObject({ text: z.string().min(1, "must not be empty") });

/** An image sent with a prompt, as bytes (base64): a daemon never reads a path a client names. */
export const PromptImageBody = z.strictObject({
  /** e.g. image/png; recognised from the bytes when absent. */
  mime_type: z.string().optional(),
  data: z.string().min(1, "must not be empty"),
});

export const PromptBody = z.strictObject({
  text: z.string().min(1, "must not be empty"),
  /** For harnesses that take images (GET /v1/harnesses says which). */
  images: z.array(PromptImageBody).optional(),
});

export const TurnStartedBody = z.strictObject({ turn: z.string(), session: z.string() });

/** The answer to a pending permission request or question, by request id. */
export const AnswerBody = z.union(
  [
    z.strictObject({ decision: z.enum(["allow", "deny"]), reason: z.string().optional() }),
    z.strictObject({
      answer: z.string(),
      reason: z.string().optional(),
      /** The person refuses to answer (nui's HITL `declined`): logged so, not read as no one answering. */
      declined: z.literal(true).optional(),
    }),
  ],
  {
    error:
      'send {"decision": "allow"} (or "deny") for a permission request, or {"answer": "..."} for a question, each with an optional "reason"',
  },
);

export const CheckpointView = z.strictObject({
  id: z.string(),
  files: z.array(z.strictObject({ path: z.string(), size: z.number(), append_only: z.boolean() })),
});

export const ForkBody = z.strictObject({ checkpoint: z.string().min(1).optional() });
/** A handoff: the harness (from GET /v1/harnesses) the conversation moves to, and its model there. */
export const HandoffBody = z.strictObject({
  to: z.string().min(1, "name a harness from GET /v1/harnesses"),
  model: z.string().min(1).optional(),
});

/** A rebuild takes no fields: the session's own harness is seeded from its log. */
export const RebuildBody = z.strictObject({});
/** What a rebuild did: how the native state was seeded, and the folder that keeps the original native files. */
export const RebuildView = z.strictObject({
  id: z.string(),
  seeded: SessionRecord.shape.seeded.unwrap(),
  /**
   * The directory, relative to the session's own, that holds the native files from before the session's first
   * rebuild: the same for every rebuild, as a later one removes the rebuilt files it replaces (src/core/rebuild-aside.ts).
   */
  aside: z.string(),
});

export const RestoreBody = z.strictObject({
  checkpoint: z.string().min(1).optional(),
  /** An absolute directory on the daemon's machine, empty or missing. */
  into: z
    .string()
    .min(1)
    .refine((p) => p.startsWith("/"), "must be an absolute path")
    // No file system path holds a NUL: Node would throw on it rather than answer what is wrong.
    .refine((p) => !p.includes("\0"), "must not contain a NUL byte (\\u0000); give a plain absolute path"),
});

/** What a restore wrote: `checkpoint` is the id of the one it restored, which "latest" leaves the caller to learn. */
export const RestoreView = z.strictObject({ ok: z.literal(true), checkpoint: z.string() });

/** A client id, as the X-Brain-Client header and POST .../control both take it. */
export const CLIENT_ID_PATTERN = /^[A-Za-z0-9_.:-]{1,128}$/;
export const CLIENT_ID_RULE = "client ids are 1 to 128 letters, digits, '_', '.', ':' or '-'";

export const ControlBody = z.strictObject({
  /** The client taking control; its later requests carry it in the X-Brain-Client header. */
  client: z.string().regex(CLIENT_ID_PATTERN, CLIENT_ID_RULE),
});

export const ControlView = z.strictObject({
  controller: z.string().optional(),
  previous: z.string().optional(),
});

export const HarnessList = z.strictObject({
  harnesses: z.array(z.strictObject({ name: z.string(), steering: z.boolean(), images: z.boolean() })),
});

export const AgentList = z.strictObject({
  agents: z.array(
    z.strictObject({ id: z.string(), name: z.string().optional(), description: z.string().optional() }),
  ),
});

export const ProviderList = z.strictObject({
  providers: z.array(
    z.strictObject({
      name: z.string(),
      /** The API it speaks (openai, anthropic, …), when the operator said. */
      api: z.string().optional(),
      /** New sessions use it when they name none. */
      default: z.boolean().optional(),
    }),
  ),
});

export const EventPage = z.strictObject({
  events: z.array(SessionEvent),
  last_seq: z.number().int(),
  /**
   * The first seq the log still holds, when retention archived or dropped its oldest events (absent: 1). A
   * cursor before it reads on from it; the events in between are gone (docs/protocol.md "Dropped ranges").
   */
  first_seq: z.number().int().positive().optional(),
});

export const WhoAmI = z.strictObject({
  tenant: z.string(),
  role: z.enum(["controller", "observer"]),
  auth: z.boolean(),
});

// ---- tokens ($BRAIN_HOME/tokens.json, mode 0600) --------------------------------------------------------------

export const TokenRole = z.enum(["controller", "observer"]);
export const TokenEntry = z.strictObject({
  token: z.string().min(16, "a token is at least 16 characters"),
  /** Sessions are visible only to tokens of their tenant. The first token's tenant is "default". */
  tenant: z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, "a tenant is 1 to 64 letters, digits, '_', '.' or '-'"),
  role: TokenRole,
  name: z.string().optional(),
  /** The configured providers this token's sessions may use, by name; absent: every one. */
  providers: z.array(ProviderName).optional(),
});
export const TokensFile = z.strictObject({
  tokens: z.array(TokenEntry).min(1, "needs at least one token"),
  /** Signs the per-session HITL URLs given to extensions (NUI_API_URL). */
  secret: z.string().min(32),
});

export type ApiErrorCode = z.infer<typeof ApiErrorCode>;
export type ApiErrorBody = z.infer<typeof ApiErrorBody>;
export type ProviderList = z.infer<typeof ProviderList>;
export type AgentList = z.infer<typeof AgentList>;
export type CreateSessionBody = z.infer<typeof CreateSessionBody>;
export type NativeDiskView = z.infer<typeof NativeDiskView>;
export type SessionView = z.infer<typeof SessionView>;
export type UnreadableSessionView = z.infer<typeof UnreadableSessionView>;
export type SessionList = z.infer<typeof SessionList>;
export type SessionListQuery = z.output<typeof SessionListQuery>;
export type AnswerBody = z.infer<typeof AnswerBody>;
export type TextBody = z.infer<typeof TextBody>;
export type PromptBody = z.infer<typeof PromptBody>;
export type ForkBody = z.infer<typeof ForkBody>;
export type HandoffBody = z.infer<typeof HandoffBody>;
export type RebuildView = z.infer<typeof RebuildView>;
export type RestoreBody = z.infer<typeof RestoreBody>;
export type RestoreView = z.infer<typeof RestoreView>;
export type ControlBody = z.infer<typeof ControlBody>;
export type ControlView = z.infer<typeof ControlView>;
export type CheckpointView = z.infer<typeof CheckpointView>;
export type TokenRole = z.infer<typeof TokenRole>;
export type TokenEntry = z.infer<typeof TokenEntry>;
export type TokensFile = z.infer<typeof TokensFile>;
