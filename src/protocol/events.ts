// Brain's own session events: what the durable log holds and what every client (SSE, CLI, ACP) reads.
import { z } from "zod";
import { DeltaData, MessageData, NativeFile, SessionConfig, ToolCallParams, ToolResult } from "./runner.js";

/** Error codes everywhere in Brain: model side, host side, a failed tool (a result, not a turn failure), caller input. */
export const ErrorCode = z.enum(["provider_error", "brain_error", "tool_error", "bad_request"]);
export const ErrorInfo = z.strictObject({ code: ErrorCode, message: z.string() });

export const TurnStatus = z.enum(["completed", "interrupted", "failed"]);

const empty = z.strictObject({});

/**
 * Bytes (UTF-8, JSON-encoded) of one tool result's text the log keeps. Under the cluster store's largest event
 * (900 KiB a message) and far under a runner frame (4 MiB): a result of tens of MB went whole to every watcher and
 * every log read, and the cluster store refused it. What the model is sent is this same cut result.
 */
export const MAX_TOOL_RESULT_BYTES = 768 << 10;

/** A tool result cut to MAX_TOOL_RESULT_BYTES: how long the tool's text was, and how much of it is left out. */
export const ToolResultCut = z.strictObject({
  total_chars: z.number().int().nonnegative(),
  omitted_chars: z.number().int().nonnegative(),
});
export type ToolResultCut = z.infer<typeof ToolResultCut>;

/**
 * The Idempotency-Key a client sent with the command this event records (prompt, steer, interrupt, answer,
 * checkpoint, rebuild): the log is where a repeated key finds the first answer, on whichever node it lands.
 */
export const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,200}$/;
const keyed = { idempotency_key: z.string().regex(IDEMPOTENCY_KEY).optional() };

/**
 * How the native state was seeded from Brain's log (a handoff or rebuild): "native" when the family wrote its
 * own format, "summary" when the history goes to the model as a marked summary in the first prompt.
 */
export const Seeded = z.strictObject({
  how: z.enum(["native", "summary"]),
  /** The last event of this session's own log the seeding covered (0 for a handoff's new session). */
  seq: z.number().int().nonnegative(),
});

/**
 * Who answered a permission request or question through the daemon: the token's tenant and the name tokens.json
 * gives it (never the token), and the client id the request named (X-Brain-Client). Absent for answers the host
 * gave itself (a timeout, an interrupt, a policy) and for a local `brain run` at its terminal.
 */
export const AnsweredBy = z.strictObject({
  tenant: z.string(),
  token: z.string().optional(),
  client: z.string().optional(),
});
export type AnsweredBy = z.infer<typeof AnsweredBy>;
const answered = { answered_by: AnsweredBy.optional() };
/**
 * Why no one answered, when the host gave the fallback (a deny, an empty answer) in a person's place, as nui's HITL
 * statuses say it: `expired`, the request's wait passed (the session's ask timeout, or nui's shorter ttl);
 * `cancelled`, its turn was interrupted or ended. So a client tells "no one answered" from a person's no.
 */
export const Unanswered = z.enum(["expired", "cancelled"]);
export type Unanswered = z.infer<typeof Unanswered>;
const unanswered = { unanswered: Unanswered.optional() };
/**
 * When a permission request or question stops waiting for a client (ISO time): its asker's expiry (nui's HITL
 * `expiresAt`), else the session's ask timeout from when it was asked. Logged so a node reading the request from the
 * stored log (its owner frozen or gone) gives the times its owner would. Absent in logs written before it.
 */
const expiring = { expires_at: z.string().optional() };

/** An image sent with a prompt, for harnesses that take them: base64 `data` or a file `path`, not both. */
export const PromptImage = z
  .strictObject({
    /** e.g. image/png; recognised from the bytes when absent. */
    mime_type: z.string().optional(),
    data: z.string().min(1).optional(),
    path: z.string().min(1).optional(),
  })
  .refine((image) => (image.data === undefined) !== (image.path === undefined), {
    message: "an image needs either data (base64) or path, not both",
  });
export type PromptImage = z.infer<typeof PromptImage>;

/** Event type → its `data`. */
export const EventData = {
  "session.opened": z.strictObject({
    harness: z.string(),
    config: SessionConfig,
    forked_from: z.strictObject({ session: z.string(), checkpoint: z.string() }).optional(),
    /** The session this one continues on another harness: its conversation up to `seq` came with it. */
    handoff_from: z.strictObject({ session: z.string(), seq: z.number().int().nonnegative() }).optional(),
  }),
  "session.closed": empty,
  "session.recovered": z.strictObject({
    reason: z.string(),
    /**
     * A rebuild's (POST .../rebuild): how it seeded the native state and the folder, in the session's directory,
     * that holds the files from before the session's first rebuild. A retry under the rebuild's key is answered from them, on any node.
     */
    rebuilt: z.strictObject({ seeded: Seeded, aside: z.string() }).optional(),
    ...keyed,
  }),
  "user.prompt": z.strictObject({ text: z.string(), images: z.array(PromptImage).optional(), ...keyed }),
  "user.steer": z.strictObject({ text: z.string(), queued: z.boolean().optional(), ...keyed }),
  "user.interrupt": z.strictObject({ ...keyed }),
  "turn.started": empty,
  "assistant.delta": DeltaData,
  "assistant.message": MessageData,
  "tool.call": ToolCallParams,
  "tool.result": ToolResult.extend({ id: z.string(), truncated: ToolResultCut.optional() }),
  "permission.requested": z.strictObject({
    id: z.string(),
    tool: z.string(),
    /**
     * The id of the tool.call this request is for, when the harness names it: a client shows the request on that
     * call, not on another call of the same tool running at the same time.
     */
    tool_call_id: z.string().optional(),
    arguments: z.record(z.string(), z.unknown()).optional(),
    reason: z.string().optional(),
    ...expiring,
  }),
  "permission.resolved": z.strictObject({
    id: z.string(),
    decision: z.enum(["allow", "deny"]),
    reason: z.string().optional(),
    ...unanswered,
    ...keyed,
    ...answered,
  }),
  "question.requested": z.strictObject({
    id: z.string(),
    question: z.string(),
    /** The answers to pick from; a client may also offer free text. */
    options: z.array(z.string()).optional(),
    /** What each option means, by option: nui's `{label, description}` options. */
    option_descriptions: z.record(z.string(), z.string()).optional(),
    /** The request's title and message (nui's payload.title and .message), shared by its questions. */
    title: z.string().optional(),
    message: z.string().optional(),
    /** A short label for this one question (nui's `header`). */
    header: z.string().optional(),
    /**
     * The request of several questions this one is part of (its first question's id, nui's requestId): its answer
     * is every question's, and a wait after it was answered, or after a restart, gathers them from the log.
     */
    request: z.string().optional(),
    ...expiring,
  }),
  "question.answered": z.strictObject({
    id: z.string(),
    answer: z.string(),
    reason: z.string().optional(),
    /**
     * A person refused to answer (nui's HITL status `declined`): the empty answer is their no, not the host's
     * fallback, so a client tells it from `unanswered`. Absent in logs written before it.
     */
    declined: z.literal(true).optional(),
    ...unanswered,
    ...keyed,
    ...answered,
  }),
  image: z.strictObject({ mime_type: z.string(), data: z.string() }),
  "turn.settled": z.strictObject({ status: TurnStatus, error: ErrorInfo.optional() }),
  "checkpoint.created": z.strictObject({ id: z.string(), files: z.array(NativeFile), ...keyed }),
  /**
   * The harness compacted its context: from here on, the model sees `summary` in place of everything before it.
   * Kept so the conversation can be rebuilt or handed to another harness as the model saw it.
   */
  "context.compacted": z.strictObject({ summary: z.string() }),
  /** Something a harness did wrong that did not stop the session (a reply for an unknown id, say). */
  "harness.warning": z.strictObject({ message: z.string() }),
  /**
   * A session tool service (an MCP server) changed state: started with its tools, failed to start, exited and
   * is being restarted, restarted, stopped. The session goes on whatever happens; calls to a service that is
   * down get error results.
   */
  "tool.service": z.strictObject({
    service: z.string(),
    state: z.enum(["started", "failed", "exited", "restarted", "stopped"]),
    message: z.string().optional(),
    tools: z.array(z.string()).optional(),
  }),
} as const;

export type EventType = keyof typeof EventData;
export const EventType = z.enum(Object.keys(EventData) as [EventType, ...EventType[]]);

const eventVariants = (Object.keys(EventData) as EventType[]).map((type) =>
  z.strictObject({
    seq: z.number().int().positive(),
    ts: z.string(),
    session: z.string(),
    turn: z.string().optional(),
    type: z.literal(type),
    data: EventData[type],
  }),
);
/**
 * One event of a session's log: `seq` increases per session from 1, dense as written; a compacted log
 * (`brain sessions compact`) has gaps where deltas were dropped, and a cursor still means "after this seq".
 */
// Built from a mapped list, so zod cannot infer the union; it is typed with the hand-written SessionEvent below.
export const SessionEvent = z.discriminatedUnion(
  "type",
  eventVariants as never,
) as unknown as z.ZodType<SessionEvent>;

export type ErrorCode = z.infer<typeof ErrorCode>;
export type ErrorInfo = z.infer<typeof ErrorInfo>;
export type TurnStatus = z.infer<typeof TurnStatus>;
export type EventDataOf<T extends EventType> = z.infer<(typeof EventData)[T]>;

/** What a harness asks: a `question.requested` before it has its id. */
export type Question = Omit<EventDataOf<"question.requested">, "id">;

/** An event before the log gives it seq and ts. */
export type NewEvent = {
  [T in EventType]: { type: T; turn?: string; data: EventDataOf<T> };
}[EventType];

/** An event as stored: the log adds seq, ts and session. */
export type SessionEvent = NewEvent & { seq: number; ts: string; session: string };
