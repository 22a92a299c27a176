// OpenAI Chat Completions: `chat.completion.chunk` SSE ending in `data: [DONE]`, or one `chat.completion`.
import { chunk } from "./scripts.js";
import type { ErrorInfo, RenderContext, SseFrame, StreamError, WireFormatHandler } from "./types.js";

export function bearerAuthorized(headers: Record<string, string>, apiKey: string): boolean {
  return headers.authorization === `Bearer ${apiKey}`;
}

/** OpenAI's error envelope, shared by Chat Completions and Responses. */
function openaiErrorBody(error: ErrorInfo): unknown {
  return {
    error: {
      message: error.message,
      type: error.type ?? openaiErrorType(error.status),
      param: null,
      code: error.code ?? null,
    },
  };
}

function openaiErrorType(status: number): string {
  if (status === 429) return "requests";
  if (status >= 500) return "server_error";
  return "invalid_request_error";
}

const openaiUnauthorized = (): ErrorInfo => ({
  status: 401,
  message: "Incorrect API key provided.",
  type: "invalid_request_error",
  code: "invalid_api_key",
});

/** Chat Completions' word of an error mid-stream: a chunk that is only the error envelope. */
function streamError(error: StreamError): SseFrame {
  return {
    data: openaiErrorBody({ status: 500, message: error.message, type: error.type ?? "server_error" }),
  };
}

/** How OpenAI's APIs (Chat Completions and Responses alike) take the key and answer a bad one or an error. */
export const openaiAccess: Pick<WireFormatHandler, "authorized" | "errorBody" | "unauthorized"> = {
  authorized: bearerAuthorized,
  errorBody: openaiErrorBody,
  unauthorized: openaiUnauthorized,
};

function toolCallId(ctx: RenderContext, index: number): string {
  return ctx.reply.toolCalls[index]?.id ?? `call_${ctx.seq}_${index}`;
}

function usageBody(ctx: RenderContext) {
  const { input, output } = ctx.reply.usage;
  return {
    prompt_tokens: input,
    completion_tokens: output,
    total_tokens: input + output,
    prompt_tokens_details: { cached_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: 0 },
  };
}

function* stream(ctx: RenderContext): Iterable<SseFrame> {
  const { reply } = ctx;
  // With include_usage every chunk carries `usage: null` and one extra chunk with empty choices carries the
  // totals, exactly as the real API does; clients look for it there.
  const withUsage = ctx.body?.stream_options?.include_usage === true;
  const base = {
    id: `chatcmpl-fake${ctx.seq}`,
    object: "chat.completion.chunk",
    created: ctx.created,
    model: ctx.model,
    system_fingerprint: null,
  };
  const frame = (delta: object, finish: string | null = null, delayMs?: number): SseFrame => ({
    data: {
      ...base,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
      ...(withUsage ? { usage: null } : {}),
    },
    delayMs,
  });

  // The role rides on the first delta that has content: an empty `content: ""` chunk would make some clients
  // open an empty text part before a tool-only reply.
  let role: { role?: "assistant" } = { role: "assistant" };
  const pieces = chunk(reply.text, reply.chunkSize);
  if (pieces.length === 0 && reply.toolCalls.length === 0) pieces.push("");
  if (reply.refusal) {
    // The API opens a refusal with content null and an empty refusal, then streams it in `refusal` deltas.
    yield frame({ ...role, content: null, refusal: "" });
    role = {};
  }
  for (const [i, piece] of pieces.entries()) {
    const delta = reply.refusal ? { refusal: piece } : { content: piece };
    yield frame({ ...role, ...delta }, null, i > 0 ? reply.delayMs : undefined);
    role = {};
  }
  // Each call's deltas: its opening (id and name), then its arguments in fragments.
  const calls = reply.toolCalls.map((call, index) => [
    { index, id: toolCallId(ctx, index), type: "function", function: { name: call.name, arguments: "" } },
    ...chunk(call.argumentsJson, reply.chunkSize).map((arguments_) => ({
      index,
      function: { arguments: arguments_ },
    })),
  ]);
  const deltas = reply.interleave ? alternating(calls) : calls.flat();
  for (const delta of deltas) {
    yield frame({ ...role, ...(role.role ? { content: null } : {}), tool_calls: [delta] });
    role = {};
  }
  yield frame({}, reply.toolCalls.length > 0 ? "tool_calls" : "stop");
  if (withUsage) yield { data: { ...base, choices: [], usage: usageBody(ctx) } };
  yield { data: "[DONE]" };
}

/** The first of each list, then the second of each, and so on. */
function alternating<T>(lists: T[][]): T[] {
  const out: T[] = [];
  for (let i = 0; lists.some((list) => i < list.length); i++) {
    for (const list of lists) if (i < list.length) out.push(list[i] as T);
  }
  return out;
}

function json(ctx: RenderContext): unknown {
  const { reply } = ctx;
  const toolCalls = reply.toolCalls.map((call, index) => ({
    id: toolCallId(ctx, index),
    type: "function",
    function: { name: call.name, arguments: call.argumentsJson },
  }));
  return {
    id: `chatcmpl-fake${ctx.seq}`,
    object: "chat.completion",
    created: ctx.created,
    model: ctx.model,
    system_fingerprint: null,
    choices: [
      {
        index: 0,
        message: {
          role: "assistant",
          content: reply.refusal || (reply.text === "" && toolCalls.length > 0) ? null : reply.text,
          refusal: reply.refusal ? reply.text : null,
          ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
        },
        logprobs: null,
        finish_reason: toolCalls.length > 0 ? "tool_calls" : "stop",
      },
    ],
    usage: usageBody(ctx),
  };
}

export const openaiChat: WireFormatHandler = {
  format: "openai-chat",
  paths: ["/v1/chat/completions", "/chat/completions"],
  ...openaiAccess,
  streamError,
  stream,
  json,
};
