// The runner stdio protocol (docs/protocol.md#runner-stdio-protocol), field for field. These zod schemas are the one source of its types and of
// the JSON Schema in schema/. Frames decode strictly: an unknown field is an error, as Go's DisallowUnknownFields.
import { z } from "zod";
import { MAX_FRAME } from "./ndjson.js";

export { MAX_FRAME };

/** What a prompt or steer frame carries besides its text: attachment, turn and request ids, the method. */
const FRAME_ENVELOPE_BYTES = 1024;
/** The longest prompt or steer text one frame carries, counted as Brain sends it (JSON-escaped UTF-8). */
export const MAX_PROMPT_BYTES = MAX_FRAME - FRAME_ENVELOPE_BYTES;

/**
 * Why `text` cannot be sent as a prompt, or undefined when it can. Every door (REST, the CLI, ACP through REST)
 * applies this one limit, so a prompt no runner could receive is refused before a turn starts.
 */
export function promptTooLarge(text: string): string | undefined {
  const bytes = Buffer.byteLength(JSON.stringify(text));
  if (bytes <= MAX_PROMPT_BYTES) return undefined;
  return `prompt of ${bytes} bytes (JSON-encoded) is over the limit of ${MAX_PROMPT_BYTES} bytes (a runner frame is at most 4 MiB): send less text, or attach it as a file the agent can read`;
}

/**
 * Why a session's `config` cannot be opened with, or undefined when it can: a runner gets it in its `open` frame,
 * and a config no frame carries would be stored (and held by every listing) only to fail each turn.
 */
export function configTooLarge(config: unknown): string | undefined {
  const bytes = Buffer.byteLength(JSON.stringify(config) ?? "");
  if (bytes <= MAX_PROMPT_BYTES) return undefined;
  return `config of ${bytes} bytes (JSON-encoded) is over the limit of ${MAX_PROMPT_BYTES} bytes (a runner opens a session with it in one frame of at most 4 MiB): shorten system_prompt (or what else is long), or give the agent the rest as a file it can read`;
}

const Id = z.string().min(1);

export const RunnerErrorCode = z.enum(["provider_error", "brain_error"]);
export const RunnerError = z.strictObject({ code: RunnerErrorCode, message: z.string() });

export const ToolSchema = z.strictObject({
  name: z.string().min(1),
  description: z.string().optional(),
  input_schema: z.record(z.string(), z.unknown()),
});

/** The immutable session config a harness is opened with. */
export const SessionConfig = z.strictObject({
  model: z.string().optional(),
  system_prompt: z.string().optional(),
  tools: z.array(z.string()).optional(),
  /**
   * Which tools an agent that has its own (the CLI families) may use. `native` (default): its own shell and
   * editors, gated by the permission policy. `bound`: only Brain's bound tools, offered over a per-session MCP
   * endpoint, with its built-ins, plugins and background work turned off. Runners and the api harness only
   * ever call bound tools, so for them this is always `bound` in effect.
   */
  tool_mode: z.enum(["native", "bound"]).optional(),
  /** Harness-specific settings (compaction threshold, CLI flags, ...), passed through untouched. */
  options: z.record(z.string(), z.unknown()).optional(),
});

/** Resolved provider credentials: they reach a runner only through the `open` frame, never its environment. */
export const ProviderCredentials = z.strictObject({
  api_key: z.string().optional(),
  base_url: z.string().optional(),
  api: z.string().optional(),
});

export const OpenParams = z.strictObject({
  session_id: Id,
  dir: z.string().min(1),
  config: SessionConfig,
  tools: z.array(ToolSchema),
  provider: ProviderCredentials,
});

export const TextParams = z.strictObject({ text: z.string() });

export const NativeFile = z.strictObject({
  path: z.string().min(1),
  size: z.number().int().nonnegative(),
  append_only: z.boolean().default(false),
});

export const Usage = z.strictObject({
  input: z.number().int().nonnegative(),
  output: z.number().int().nonnegative(),
  cache_read: z.number().int().nonnegative().optional(),
  cache_write: z.number().int().nonnegative().optional(),
  cost: z.number().nonnegative().optional(),
});

export const DeltaData = z.strictObject({ text: z.string() });
export const MessageData = z.strictObject({
  text: z.string(),
  usage: Usage.optional(),
  stop_reason: z.string().optional(),
});

/**
 * A value as the seed's Go host decodes it: json.Unmarshal of `null` into a map, struct or slice leaves it
 * empty, and `null` is what a Go runner's nil map or slice encodes to (a checkpoint with no files). So `null` is
 * accepted, as the empty value.
 */
function nullAsEmpty<T extends z.ZodType>(schema: T, empty: () => z.output<T>) {
  return schema.nullable().transform((result): z.output<T> => result ?? empty());
}

/**
 * An optional field as the seed's Go host decodes it: `null` leaves a pointer nil, and a nil pointer (no usage,
 * no stop reason, no cache counts) is what a Go runner writes as `null` unless its field says omitempty. So
 * `null` is accepted as the field left out, and the frame Brain keeps leaves it out.
 */
function nullAsAbsent<T extends z.ZodType>(schema: T) {
  return schema.nullish().transform((value) => value ?? undefined);
}

/**
 * A field as the seed's Go host decodes it when left out: its zero value. A Go runner whose field says omitempty
 * leaves out an empty text, a zero count, a nil or empty map, and the host reads each as that zero.
 */
function absentAsZero<T extends z.ZodType>(schema: T, zero: () => z.output<T>) {
  // Not .default(): the generated schema of what a runner writes would then call the field required.
  return schema.optional().transform((value): z.output<T> => value ?? zero());
}

/** The object without the fields nullAsAbsent made undefined, so what Brain logs has no such keys. */
function withoutAbsent<T extends object>(value: T): T {
  for (const key of Object.keys(value)) {
    if ((value as Record<string, unknown>)[key] === undefined) delete (value as Record<string, unknown>)[key];
  }
  return value;
}

/** Usage as a runner writes it: a Go runner's nil counts are `null` (see nullAsAbsent). */
const RunnerUsage = z
  .strictObject({
    input: absentAsZero(Usage.shape.input, () => 0),
    output: absentAsZero(Usage.shape.output, () => 0),
    cache_read: nullAsAbsent(Usage.shape.cache_read.unwrap()),
    cache_write: nullAsAbsent(Usage.shape.cache_write.unwrap()),
    cost: nullAsAbsent(Usage.shape.cost.unwrap()),
  })
  .transform((usage) => withoutAbsent(usage) as Usage);
/** assistant.message's data as a runner writes it: `usage` and `stop_reason` may be `null` for absent. */
const RunnerMessageData = z
  .strictObject({
    text: absentAsZero(MessageData.shape.text, () => ""),
    usage: nullAsAbsent(RunnerUsage),
    stop_reason: nullAsAbsent(z.string()),
  })
  .transform((data) => withoutAbsent(data) as MessageData);

export const ToolCallParams = z.strictObject({
  id: Id,
  name: z.string().min(1),
  arguments: z.record(z.string(), z.unknown()),
});
/**
 * A tool.call's params as a runner writes them: a Go runner's call with no arguments (a nil map) writes `null`,
 * or nothing when the field says omitempty, which the seed's Go host reads as no arguments. The log keeps them as
 * `{}` (ToolCallParams).
 */
const RunnerToolCallParams = ToolCallParams.extend({
  arguments: absentAsZero(
    nullAsEmpty(ToolCallParams.shape.arguments, () => ({})),
    () => ({}),
  ),
});
export const ToolContent = z.strictObject({ type: z.literal("text"), text: z.string() });
export const ToolResult = z.strictObject({ content: z.array(ToolContent), is_error: z.boolean() });

/**
 * A checkpoint's file as a runner writes it: `append_only` of `null` (a Go runner's nil *bool) is false, and an
 * empty file's size may be left out (omitempty), as 0.
 */
const RunnerNativeFile = NativeFile.extend({
  size: absentAsZero(NativeFile.shape.size, () => 0),
  append_only: NativeFile.shape.append_only
    .unwrap()
    .nullable()
    .default(false)
    .transform((v) => v ?? false),
});

// Brain → runner requests. open, checkpoint and detach have no active turn; the others carry it.
const noTurn = { attachment: Id, id: Id };
const withTurn = { attachment: Id, turn: Id, id: Id };
export const OpenRequest = z.strictObject({ ...noTurn, method: z.literal("open"), params: OpenParams });
export const PromptRequest = z.strictObject({ ...withTurn, method: z.literal("prompt"), params: TextParams });
export const SteerRequest = z.strictObject({ ...withTurn, method: z.literal("steer"), params: TextParams });
export const InterruptRequest = z.strictObject({
  ...withTurn,
  method: z.literal("interrupt"),
  params: z.null(),
});
export const CheckpointRequest = z.strictObject({
  ...noTurn,
  method: z.literal("checkpoint"),
  params: z.null(),
});
export const DetachRequest = z.strictObject({ ...noTurn, method: z.literal("detach"), params: z.null() });
export const RunnerRequest = z.discriminatedUnion("method", [
  OpenRequest,
  PromptRequest,
  SteerRequest,
  InterruptRequest,
  CheckpointRequest,
  DetachRequest,
]);

/** What each request's `result` must be. `open` may return diagnostic metadata such as `{"tools": [...]}`. */
export const RequestResults = {
  open: nullAsEmpty(z.record(z.string(), z.unknown()), () => ({})),
  prompt: nullAsEmpty(
    z
      .strictObject({ interrupted: nullAsAbsent(z.boolean()) })
      .transform((result): { interrupted?: boolean } => withoutAbsent(result)),
    () => ({}),
  ),
  steer: nullAsEmpty(z.strictObject({}), () => ({})),
  interrupt: nullAsEmpty(z.strictObject({}), () => ({})),
  checkpoint: nullAsEmpty(z.array(RunnerNativeFile), () => []),
  detach: nullAsEmpty(z.strictObject({}), () => ({})),
} as const;

// Replies go both ways: the runner answers Brain's requests, Brain answers the runner's tool calls.
const replyBase = { attachment: Id, turn: Id.optional(), id: Id };
/**
 * A reply's turn. A Go runner whose frame's Turn has no omitempty writes `""` in a reply to open, checkpoint or
 * detach (no turn), which the seed's Go host compares equal to the request's none: Brain reads `""` as none too.
 */
const ReplyTurn = nullAsAbsent(z.string()).transform((turn) => turn || undefined);
/**
 * A runner's reply. A Go runner whose frame has both fields without omitempty writes the unused one as `null`
 * (a nil *Error, a nil json.RawMessage), and a reply to open, checkpoint or detach may write `"turn":null`: the
 * seed's Go host reads each as absent, and so does Brain. A reply with both a result and an error is refused.
 */
export const RunnerResultReply = z
  .strictObject({
    ...replyBase,
    turn: ReplyTurn,
    result: z.unknown(),
    error: z.null().optional(),
  })
  .transform(({ error: _, ...reply }) => withoutAbsent(reply));
export const RunnerErrorReply = z
  .strictObject({ ...replyBase, turn: ReplyTurn, error: RunnerError, result: z.null().optional() })
  .transform(({ result: _, ...reply }) => withoutAbsent(reply));
export const RunnerReply = z.union([RunnerResultReply, RunnerErrorReply]);
export const ToolReply = z.strictObject({ ...replyBase, turn: Id, result: ToolResult });

// Runner → Brain: streaming events and reverse tool calls during a prompt.
export const DeltaEvent = z.strictObject({
  attachment: Id,
  turn: Id,
  event: z.literal("assistant.delta"),
  data: z.strictObject({ text: absentAsZero(DeltaData.shape.text, () => "") }),
});
export const MessageEvent = z.strictObject({
  attachment: Id,
  turn: Id,
  event: z.literal("assistant.message"),
  data: RunnerMessageData,
});
export const RunnerEvent = z.discriminatedUnion("event", [DeltaEvent, MessageEvent]);
export const ToolCallRequest = z.strictObject({
  ...withTurn,
  method: z.literal("tool.call"),
  params: RunnerToolCallParams,
});

/** Every frame a runner may write on stdout. */
export const RunnerToBrainFrame = z.union([RunnerEvent, ToolCallRequest, RunnerReply]);
/** Every frame Brain writes on a runner's stdin. */
export const BrainToRunnerFrame = z.union([RunnerRequest, ToolReply]);

export type RunnerErrorCode = z.infer<typeof RunnerErrorCode>;
export type RunnerError = z.infer<typeof RunnerError>;
export type ToolSchema = z.infer<typeof ToolSchema>;
export type SessionConfig = z.infer<typeof SessionConfig>;
export type ProviderCredentials = z.infer<typeof ProviderCredentials>;
export type OpenParams = z.infer<typeof OpenParams>;
export type NativeFile = z.infer<typeof NativeFile>;
export type Usage = z.infer<typeof Usage>;
export type MessageData = z.infer<typeof MessageData>;
export type ToolCallParams = z.infer<typeof ToolCallParams>;
export type ToolResult = z.infer<typeof ToolResult>;
export type RunnerRequest = z.infer<typeof RunnerRequest>;
export type RunnerMethod = RunnerRequest["method"];
export type RunnerReply = z.infer<typeof RunnerReply>;
export type ToolReply = z.infer<typeof ToolReply>;
export type RunnerEvent = z.infer<typeof RunnerEvent>;
export type ToolCallRequest = z.infer<typeof ToolCallRequest>;
export type RunnerToBrainFrame = z.infer<typeof RunnerToBrainFrame>;
export type BrainToRunnerFrame = z.infer<typeof BrainToRunnerFrame>;
