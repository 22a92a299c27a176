// The daemon's /v1 API as one table: each endpoint's method, path, body and response schemas and what it is for.
// The daemon registers its routes from it (adding only the handlers), /openapi.json is generated from it, and
// the TypeScript client derives every call's argument and result types from it, so the three cannot drift.
import type { z } from "zod";
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
  MAX_EVENT_PAGE,
  MAX_SESSION_PAGE,
  Ok,
  PromptBody,
  ProviderList,
  RebuildBody,
  RebuildView,
  RestoreBody,
  RestoreView,
  SessionList,
  SessionView,
  TextBody,
  TurnStartedBody,
  WhoAmI,
} from "./api.js";

export interface Endpoint {
  method: "GET" | "POST" | "DELETE";
  /** OpenAPI style: /v1/sessions/{id}. */
  path: string;
  summary: string;
  tag: string;
  body?: z.ZodType;
  response?: z.ZodType;
  /** Success status (default 200). */
  status?: 200 | 201 | 202 | 204;
  /** Drives a session (prompt, answer, ...): refused to observers. */
  drive?: boolean;
  /** Serves text/event-stream instead of JSON. */
  stream?: boolean;
  query?: Record<string, string>;
  headers?: Record<string, string>;
}

/** Commands take an Idempotency-Key (src/server/idempotency.ts): a retry with the same key runs once. */
const IDEMPOTENT = {
  "Idempotency-Key":
    "a client-chosen id for this command (1-200 printable ASCII characters, e.g. a UUID): a retry with the same key and body (after a timeout, on any node) does not run it again and gets the first answer; the key sent again with another body, or with another command, is a 422",
};

/** Requests that make a session take one too (src/server/keyed-creates.ts): a retry gets the same session. */
const MAKES_ONE = {
  "Idempotency-Key":
    "a client-chosen id for this request (1-200 printable ASCII characters, e.g. a UUID): a retry with the same key and body (after a timeout, after a restart, on any node) makes no second session and gets the one the first made; the key with another body is a 422. Keys are the tenant's own, and last as long as the session they made",
};

/** A delete takes one too (src/server/keyed-deletes.ts): its retry gets 204 again, not a 404. */
const DELETES_ONE = {
  "Idempotency-Key":
    "a client-chosen id for this delete (1-200 printable ASCII characters, e.g. a UUID): a retry with the same key (after a timeout, after a restart, on any node) within 24 hours gets 204 again, not a 404, and never deletes a session made again under the id since. Keys are the tenant's own",
};

/** Taking control takes one too (src/server/control.ts): its retry takes nothing again and gets the first answer. */
const TAKES_ONE = {
  "Idempotency-Key":
    "a client-chosen id for this take (1-200 printable ASCII characters, e.g. a UUID): a retry with the same key and client (after a timeout) takes control only once and gets the first answer (the same previous controller), even when another client took control since; the key with another client is a 422. Keys are kept by the node holding the session, as its controller is",
};

/** A rebuild and a restore take one too (src/server/keyed-answers.ts): a retry gets the first answer. */
const ANSWERED_ONCE = {
  "Idempotency-Key":
    "a client-chosen id for this request (1-200 printable ASCII characters, e.g. a UUID): a retry with the same key and body (after a timeout) does not run it again and gets the first answer (the same aside folder; the same checkpoint, not a refusal of the directory the first filled); the key with another body is a 422. Keys are the tenant's own, kept by the node that ran the request, the newest 1024: a restart or a failover forgets them",
};

const SEQ_QUERY = {
  after: "events with seq greater than this (default 0)",
  limit: `at most this many (default 1000, at most ${MAX_EVENT_PAGE}); the next page starts after the last seq`,
};

export const ENDPOINTS = {
  whoami: {
    method: "GET",
    path: "/v1/whoami",
    tag: "meta",
    summary: "The tenant and role of the token used",
    response: WhoAmI,
  },
  harnesses: {
    method: "GET",
    path: "/v1/harnesses",
    tag: "meta",
    summary: "The harnesses this daemon can run",
    response: HarnessList,
  },
  providers: {
    method: "GET",
    path: "/v1/providers",
    tag: "meta",
    summary:
      'The providers this token may name in POST /v1/sessions {"provider": name} (configured by the operator)',
    response: ProviderList,
  },
  agents: {
    method: "GET",
    path: "/v1/agents",
    tag: "meta",
    summary: "The agent definitions a session can be created from",
    response: AgentList,
  },
  sessions: {
    method: "GET",
    path: "/v1/sessions",
    tag: "sessions",
    summary:
      "The sessions of the caller's tenant, oldest first (or newest with ?order=newest): all of them, or a page of them with ?limit= and ?after=",
    query: {
      limit: `at most this many sessions (1 to ${MAX_SESSION_PAGE}); the answer's \`next\` says where the next page starts. Without it, every session`,
      after:
        "the sessions after this one (a page's `next`), which must still be one of the caller's sessions",
      order: '"oldest" (the default) or "newest": the order of the list and of its pages',
    },
    response: SessionList,
  },
  create: {
    method: "POST",
    path: "/v1/sessions",
    tag: "sessions",
    summary:
      "Create a session on a harness or from an agent definition (its harness starts with the first prompt)",
    body: CreateSessionBody,
    response: SessionView,
    status: 201,
    drive: true,
    headers: MAKES_ONE,
  },
  session: {
    method: "GET",
    path: "/v1/sessions/{id}",
    tag: "sessions",
    summary:
      "A session: its record, running turn, pending requests, last seq, controller and what its native state takes on disk",
    response: SessionView,
  },
  delete: {
    method: "DELETE",
    path: "/v1/sessions/{id}",
    tag: "sessions",
    summary:
      "Delete a session and all its files (its watchers' streams end); 409 naming the sessions forked or handed off from it, unless forced",
    status: 204,
    drive: true,
    headers: DELETES_ONE,
    query: {
      force:
        '"true" deletes a session that other sessions were forked or handed off from; they read their history from its log when used, and lose the part of their conversation that came from it. Without it such a delete is a 409 naming them',
    },
  },
  close: {
    method: "POST",
    path: "/v1/sessions/{id}/close",
    tag: "sessions",
    summary: "Release the session's harness; a later prompt reopens it",
    response: SessionView,
    drive: true,
    headers: IDEMPOTENT,
  },
  prompt: {
    method: "POST",
    path: "/v1/sessions/{id}/prompt",
    tag: "turns",
    summary: "Start a turn; returns its id at once while the work goes on (watch /events)",
    body: PromptBody,
    response: TurnStartedBody,
    status: 202,
    drive: true,
    headers: IDEMPOTENT,
  },
  steer: {
    method: "POST",
    path: "/v1/sessions/{id}/steer",
    tag: "turns",
    summary: "Add text to the running turn (harnesses that support steering)",
    body: TextBody,
    response: Ok,
    status: 202,
    drive: true,
    headers: IDEMPOTENT,
  },
  interrupt: {
    method: "POST",
    path: "/v1/sessions/{id}/interrupt",
    tag: "turns",
    summary: "Stop the running turn; it settles as interrupted",
    response: Ok,
    status: 202,
    drive: true,
    headers: IDEMPOTENT,
  },
  answer: {
    method: "POST",
    path: "/v1/sessions/{id}/requests/{requestId}",
    tag: "turns",
    summary:
      'Answer a pending permission request ({"decision"}) or question ({"answer"}); a second answer gets 409',
    body: AnswerBody,
    response: Ok,
    drive: true,
    headers: IDEMPOTENT,
  },
  checkpoint: {
    method: "POST",
    path: "/v1/sessions/{id}/checkpoints",
    tag: "checkpoints",
    summary:
      "Checkpoint the session's native state between turns (409 while a turn runs or a prompt is starting one); a prompt sent meanwhile starts after it",
    response: CheckpointView,
    status: 201,
    drive: true,
    headers: IDEMPOTENT,
  },
  fork: {
    method: "POST",
    path: "/v1/sessions/{id}/fork",
    tag: "checkpoints",
    summary: "A new session that starts from a checkpoint of this one (default: the latest)",
    body: ForkBody,
    response: SessionView,
    status: 201,
    drive: true,
    headers: MAKES_ONE,
  },
  handoff: {
    method: "POST",
    path: "/v1/sessions/{id}/handoff",
    tag: "sessions",
    summary:
      "A new session on another harness that continues this one's conversation (handoff_from links it); the original stays as it was",
    body: HandoffBody,
    response: SessionView,
    status: 201,
    drive: true,
    headers: MAKES_ONE,
  },
  rebuild: {
    method: "POST",
    path: "/v1/sessions/{id}/rebuild",
    tag: "sessions",
    summary:
      "Rewrite the session's native state from its log, for a harness that lost it (brain sessions rebuild); the native files from before its first rebuild are kept aside, those a later rebuild replaces are removed. Refused while a turn runs or another process has the session open",
    body: RebuildBody,
    response: RebuildView,
    drive: true,
    headers: ANSWERED_ONCE,
  },
  restore: {
    method: "POST",
    path: "/v1/sessions/{id}/restore",
    tag: "checkpoints",
    summary: "Write a checkpoint's native files into an empty directory on the daemon's machine",
    body: RestoreBody,
    response: RestoreView,
    drive: true,
    headers: ANSWERED_ONCE,
  },
  control: {
    method: "POST",
    path: "/v1/sessions/{id}/control",
    tag: "sessions",
    summary: "Take control of the session for a client id (the previous controller becomes an observer)",
    body: ControlBody,
    response: ControlView,
    drive: true,
    headers: TAKES_ONE,
  },
  log: {
    method: "GET",
    path: "/v1/sessions/{id}/log",
    tag: "events",
    summary: "A page of the session's durable events after a seq, as JSON",
    query: SEQ_QUERY,
    response: EventPage,
  },
  events: {
    method: "GET",
    path: "/v1/sessions/{id}/events",
    tag: "events",
    summary:
      "The session's events as text/event-stream: replay after Last-Event-ID or ?after=, then live; `id:` is the seq",
    stream: true,
    query: {
      after: "replay events with seq greater than this, unless a Last-Event-ID header says where to resume",
      role: '"observer" to watch without holding control',
      client: "the client id (X-Brain-Client) whose control this stream keeps alive",
      access_token: "the bearer token, for clients that cannot set headers (EventSource)",
    },
    headers: { "Last-Event-ID": "the seq of the last event the client has" },
  },
} as const satisfies Record<string, Endpoint>;

export type Endpoints = typeof ENDPOINTS;
export type EndpointName = keyof Endpoints;

/** `{id: string, requestId: string}` from "/v1/sessions/{id}/requests/{requestId}". */
export type PathParams<P extends string> = P extends `${string}{${infer Name}}${infer Rest}`
  ? { [K in Name]: string } & PathParams<Rest>
  : unknown;

/** What an endpoint takes as its JSON body (its schema's input), or undefined when it takes none. */
export type EndpointBody<N extends EndpointName> = Endpoints[N] extends { body: infer B extends z.ZodType }
  ? z.input<B>
  : undefined;

/** What an endpoint answers (its schema's output); undefined for 204 and streams. */
export type EndpointResponse<N extends EndpointName> = Endpoints[N] extends {
  response: infer R extends z.ZodType;
}
  ? z.output<R>
  : undefined;

/** The endpoint's path with its parameters filled in (each one URL-encoded). */
export function endpointPath(path: string, params: Record<string, string>): string {
  return path.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const value = params[name];
    if (value === undefined) throw new Error(`endpoint ${path}: no value for {${name}}`);
    return encodeURIComponent(value);
  });
}
