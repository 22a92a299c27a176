// Ollama's native chat API: `POST /api/chat` answers with newline-delimited JSON, one `{message, done: false}`
// object per piece and a closing `{done: true, done_reason, prompt_eval_count, eval_count, …}`. Unlike the other
// formats it streams unless the body says `"stream": false`, and errors are `{"error": "text"}`.
import { bearerAuthorized } from "./openai-chat.js";
import { chunk } from "./scripts.js";
import type { ErrorInfo, RenderContext, SseFrame, StreamError, WireFormatHandler } from "./types.js";

function errorBody(error: ErrorInfo): unknown {
  return { error: error.message };
}

/** Ollama's timestamps carry nanoseconds; clients only parse them as dates. */
function createdAt(ctx: RenderContext): string {
  return new Date(ctx.created * 1000).toISOString().replace("Z", "000000Z");
}

function toolCalls(ctx: RenderContext): object[] {
  return ctx.reply.toolCalls.map((call, index) => ({
    // Ollama 0.12 and later number and name their calls; a scripted id is passed on as given.
    ...(call.id ? { id: call.id } : {}),
    function: { index, name: call.name, arguments: JSON.parse(call.argumentsJson) },
  }));
}

function line(ctx: RenderContext, message: object, done: boolean): Record<string, unknown> {
  return { model: ctx.model, created_at: createdAt(ctx), message: { role: "assistant", ...message }, done };
}

/** The closing object's statistics (durations in nanoseconds, made up but plausible). */
function totals(ctx: RenderContext) {
  const { input, output } = ctx.reply.usage;
  return {
    done_reason: "stop",
    total_duration: 1_000_000 * (input + output + 1),
    load_duration: 1_000_000,
    prompt_eval_count: input,
    prompt_eval_duration: 1_000_000 * input,
    eval_count: output,
    eval_duration: 1_000_000 * output,
  };
}

function* stream(ctx: RenderContext): Iterable<SseFrame> {
  const { reply } = ctx;
  for (const [i, piece] of chunk(reply.text, reply.chunkSize).entries()) {
    yield { data: line(ctx, { content: piece }, false), delayMs: i > 0 ? reply.delayMs : undefined };
  }
  // Tool calls arrive whole, in one object of their own, before the closing one.
  if (reply.toolCalls.length > 0)
    yield { data: line(ctx, { content: "", tool_calls: toolCalls(ctx) }, false) };
  yield { data: { ...line(ctx, { content: "" }, true), ...totals(ctx) } };
}

function json(ctx: RenderContext): unknown {
  const calls = toolCalls(ctx);
  const message = { content: ctx.reply.text, ...(calls.length > 0 ? { tool_calls: calls } : {}) };
  return { ...line(ctx, message, true), ...totals(ctx) };
}

export const ollama: WireFormatHandler = {
  format: "ollama",
  paths: ["/api/chat"],
  streams: (body) => body.stream !== false,
  framing: "ndjson",
  // A local Ollama takes no key; Ollama's cloud and proxies in front of it take a Bearer token.
  authorized: bearerAuthorized,
  errorBody,
  // Ollama ends a failing stream with a line that is only `{"error": "…"}`.
  streamError: (error: StreamError) => ({ data: errorBody({ status: 500, message: error.message }) }),
  unauthorized: () => ({ status: 401, message: "unauthorized" }),
  stream,
  json,
};
