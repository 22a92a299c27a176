// Anthropic Messages: named SSE events (message_start … message_stop), or one `message` object.
import { bearerAuthorized } from "./openai-chat.js";
import { chunk } from "./scripts.js";
import type { ErrorInfo, RenderContext, SseFrame, StreamError, WireFormatHandler } from "./types.js";

const ERROR_TYPES: Record<number, string> = {
  400: "invalid_request_error",
  401: "authentication_error",
  403: "permission_error",
  404: "not_found_error",
  413: "request_too_large",
  429: "rate_limit_error",
  500: "api_error",
  529: "overloaded_error",
};

function errorBody(error: ErrorInfo): unknown {
  const type =
    error.type ?? ERROR_TYPES[error.status] ?? (error.status >= 500 ? "api_error" : "invalid_request_error");
  return { type: "error", error: { type, message: error.message } };
}

/** Anthropic's `error` event: it can follow message_start, or any content, in a stream begun with a 200. */
function streamError(error: StreamError): SseFrame {
  return event("error", { error: { type: error.type ?? "overloaded_error", message: error.message } });
}

function toolUseId(ctx: RenderContext, index: number): string {
  return ctx.reply.toolCalls[index]?.id ?? `toolu_fake${ctx.seq}_${index}`;
}

function stopReason(ctx: RenderContext): string {
  return ctx.reply.stopReason ?? (ctx.reply.toolCalls.length > 0 ? "tool_use" : "end_turn");
}

function usageBody(input: number, output: number) {
  return {
    input_tokens: input,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
    output_tokens: output,
  };
}

/** A text block is sent when there is text, or when there is nothing else (an empty reply is one empty block). */
function hasTextBlock(ctx: RenderContext): boolean {
  return ctx.reply.text !== "" || ctx.reply.toolCalls.length === 0;
}

function event(type: string, payload: object = {}, delayMs?: number): SseFrame {
  return { event: type, data: { type, ...payload }, delayMs };
}

function* stream(ctx: RenderContext): Iterable<SseFrame> {
  const { reply } = ctx;
  yield event("message_start", {
    message: {
      id: `msg_fake${ctx.seq}`,
      type: "message",
      role: "assistant",
      model: ctx.model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: usageBody(reply.usage.input, 1),
    },
  });
  let index = 0;
  if (reply.reasoning) {
    const { text, signature } = reply.reasoning;
    yield event("content_block_start", {
      index,
      content_block: { type: "thinking", thinking: "", signature: "" },
    });
    for (const piece of chunk(text, reply.chunkSize)) {
      yield event("content_block_delta", { index, delta: { type: "thinking_delta", thinking: piece } });
    }
    yield event("content_block_delta", { index, delta: { type: "signature_delta", signature } });
    yield event("content_block_stop", { index });
    index++;
  }
  if (hasTextBlock(ctx)) {
    yield event("content_block_start", { index, content_block: { type: "text", text: "" } });
    // The real API interleaves pings; clients must tolerate them, so send one where it usually comes.
    yield event("ping");
    for (const [i, piece] of chunk(reply.text, reply.chunkSize).entries()) {
      const delay = i > 0 ? reply.delayMs : undefined;
      yield event("content_block_delta", { index, delta: { type: "text_delta", text: piece } }, delay);
    }
    yield event("content_block_stop", { index });
    index++;
  }
  for (const [i, call] of reply.toolCalls.entries()) {
    const block = { type: "tool_use", id: toolUseId(ctx, i), name: call.name, input: {} };
    yield event("content_block_start", { index, content_block: block });
    for (const fragment of chunk(call.argumentsJson, reply.chunkSize)) {
      yield event("content_block_delta", {
        index,
        delta: { type: "input_json_delta", partial_json: fragment },
      });
    }
    yield event("content_block_stop", { index });
    index++;
  }
  yield event("message_delta", {
    delta: { stop_reason: stopReason(ctx), stop_sequence: null },
    usage: usageBody(reply.usage.input, reply.usage.output),
  });
  yield event("message_stop");
}

function json(ctx: RenderContext): unknown {
  const { reply } = ctx;
  const content: object[] = reply.reasoning
    ? [{ type: "thinking", thinking: reply.reasoning.text, signature: reply.reasoning.signature }]
    : [];
  if (hasTextBlock(ctx)) content.push({ type: "text", text: reply.text });
  for (const [i, call] of reply.toolCalls.entries()) {
    content.push({
      type: "tool_use",
      id: toolUseId(ctx, i),
      name: call.name,
      input: JSON.parse(call.argumentsJson),
    });
  }
  return {
    id: `msg_fake${ctx.seq}`,
    type: "message",
    role: "assistant",
    model: ctx.model,
    content,
    stop_reason: stopReason(ctx),
    stop_sequence: null,
    usage: usageBody(reply.usage.input, reply.usage.output),
  };
}

export const anthropic: WireFormatHandler = {
  format: "anthropic",
  paths: ["/v1/messages", "/messages"],
  // Older SDKs and most tools send `x-api-key`; @anthropic-ai/sdk 1.x sends the same key as a Bearer token.
  authorized: (headers, apiKey) => headers["x-api-key"] === apiKey || bearerAuthorized(headers, apiKey),
  errorBody,
  streamError,
  unauthorized: () => ({ status: 401, message: "invalid x-api-key", type: "authentication_error" }),
  stream,
  json,
};
