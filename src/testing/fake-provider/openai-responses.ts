// OpenAI Responses: typed SSE events (response.created … response.completed), or one `response` object.
import { openaiAccess } from "./openai-chat.js";
import { chunk } from "./scripts.js";
import type { ErrorInfo, RenderContext, SseFrame, StreamError, WireFormatHandler } from "./types.js";

function messageId(ctx: RenderContext): string {
  return `msg_fake${ctx.seq}`;
}

function textPart(text: string) {
  return { type: "output_text", text, annotations: [], logprobs: [] };
}

/** A refusal is the message's content part instead of its text. */
function contentPart(ctx: RenderContext, text: string) {
  return ctx.reply.refusal ? { type: "refusal", refusal: text } : textPart(text);
}

function messageItem(ctx: RenderContext, status: "in_progress" | "completed") {
  const content = status === "completed" ? [contentPart(ctx, ctx.reply.text)] : [];
  return { id: messageId(ctx), type: "message", status, role: "assistant", content };
}

function reasoningId(ctx: RenderContext): string {
  return `rs_fake${ctx.seq}`;
}

/** The summary is what the API shows of the reasoning; the encrypted whole comes only when `include` asks for it. */
function reasoningItem(ctx: RenderContext, done: boolean) {
  const { text, signature } = ctx.reply.reasoning!;
  const include = ctx.body?.include;
  const encrypted = Array.isArray(include) && include.includes("reasoning.encrypted_content");
  return {
    id: reasoningId(ctx),
    type: "reasoning",
    summary: done ? [{ type: "summary_text", text }] : [],
    ...(encrypted ? { encrypted_content: signature } : {}),
  };
}

/**
 * A call made after reasoning names that reasoning item in its own id, so that `rejects` can demand it back, as the
 * real API does ("provided without its required 'reasoning' item"), with no memory of earlier responses.
 */
const AFTER_REASONING = /_after_(rs_fake\d+)$/;

/** pi-ai pairs `call_id|id` and OpenAI wants function-call item ids to start with "fc". */
function functionCallItem(ctx: RenderContext, index: number, status: "in_progress" | "completed") {
  const call = ctx.reply.toolCalls[index]!;
  const after = ctx.reply.reasoning ? `_after_${reasoningId(ctx)}` : "";
  return {
    id: `fc_fake${ctx.seq}_${index}${after}`,
    type: "function_call",
    status,
    arguments: status === "completed" ? call.argumentsJson : "",
    call_id: call.id ?? `call_${ctx.seq}_${index}`,
    name: call.name,
    ...(call.namespace ? { namespace: call.namespace } : {}),
  };
}

function hasMessage(ctx: RenderContext): boolean {
  return ctx.reply.text !== "" || ctx.reply.toolCalls.length === 0;
}

function outputItems(ctx: RenderContext): object[] {
  const items: object[] = ctx.reply.reasoning ? [reasoningItem(ctx, true)] : [];
  if (hasMessage(ctx)) items.push(messageItem(ctx, "completed"));
  for (const i of ctx.reply.toolCalls.keys()) items.push(functionCallItem(ctx, i, "completed"));
  return items;
}

function responseObject(ctx: RenderContext, done: boolean) {
  const { input, output } = ctx.reply.usage;
  return {
    id: `resp_fake${ctx.seq}`,
    object: "response",
    created_at: ctx.created,
    status: done ? "completed" : "in_progress",
    error: null,
    incomplete_details: null,
    instructions: ctx.body?.instructions ?? null,
    max_output_tokens: ctx.body?.max_output_tokens ?? null,
    model: ctx.model,
    output: done ? outputItems(ctx) : [],
    parallel_tool_calls: true,
    previous_response_id: ctx.body?.previous_response_id ?? null,
    reasoning: { effort: null, summary: null },
    store: ctx.body?.store ?? true,
    temperature: 1,
    text: { format: { type: "text" } },
    tool_choice: ctx.body?.tool_choice ?? "auto",
    tools: ctx.body?.tools ?? [],
    top_p: 1,
    truncation: "disabled",
    usage: done
      ? {
          input_tokens: input,
          input_tokens_details: { cached_tokens: 0 },
          output_tokens: output,
          output_tokens_details: { reasoning_tokens: 0 },
          total_tokens: input + output,
        }
      : null,
    user: null,
    metadata: {},
  };
}

function* stream(ctx: RenderContext): Iterable<SseFrame> {
  const { reply } = ctx;
  // The real API names each event and numbers them; the SDKs read `type` from the data, some proxies the name.
  let sequence = 0;
  const event = (type: string, payload: object, delayMs?: number): SseFrame => ({
    event: type,
    data: { type, ...payload, sequence_number: sequence++ },
    delayMs,
  });

  yield event("response.created", { response: responseObject(ctx, false) });
  yield event("response.in_progress", { response: responseObject(ctx, false) });
  let outputIndex = 0;
  if (reply.reasoning) {
    const at = { item_id: reasoningId(ctx), output_index: outputIndex, summary_index: 0 };
    const part = { type: "summary_text", text: reply.reasoning.text };
    yield event("response.output_item.added", { output_index: outputIndex, item: reasoningItem(ctx, false) });
    yield event("response.reasoning_summary_part.added", { ...at, part: { ...part, text: "" } });
    for (const piece of chunk(reply.reasoning.text, reply.chunkSize)) {
      yield event("response.reasoning_summary_text.delta", { ...at, delta: piece });
    }
    yield event("response.reasoning_summary_text.done", { ...at, text: reply.reasoning.text });
    yield event("response.reasoning_summary_part.done", { ...at, part });
    yield event("response.output_item.done", { output_index: outputIndex, item: reasoningItem(ctx, true) });
    outputIndex++;
  }
  if (hasMessage(ctx)) {
    const at = { item_id: messageId(ctx), output_index: outputIndex, content_index: 0 };
    yield event("response.output_item.added", {
      output_index: outputIndex,
      item: messageItem(ctx, "in_progress"),
    });
    // pi-ai drops text deltas that arrive before their content part is announced.
    yield event("response.content_part.added", { ...at, part: contentPart(ctx, "") });
    // A refusal streams as `response.refusal.delta`s and ends with `response.refusal.done`, with no logprobs.
    const kind = reply.refusal ? "refusal" : "output_text";
    const extra = reply.refusal ? {} : { logprobs: [] };
    for (const [i, piece] of chunk(reply.text, reply.chunkSize).entries()) {
      yield event(
        `response.${kind}.delta`,
        { ...at, delta: piece, ...extra },
        i > 0 ? reply.delayMs : undefined,
      );
    }
    const whole = reply.refusal ? { refusal: reply.text } : { text: reply.text, logprobs: [] };
    yield event(`response.${kind}.done`, { ...at, ...whole });
    yield event("response.content_part.done", { ...at, part: contentPart(ctx, reply.text) });
    yield event("response.output_item.done", {
      output_index: outputIndex,
      item: messageItem(ctx, "completed"),
    });
    outputIndex++;
  }
  for (const [i, call] of reply.toolCalls.entries()) {
    const added = functionCallItem(ctx, i, "in_progress");
    const at = { item_id: added.id, output_index: outputIndex };
    yield event("response.output_item.added", { output_index: outputIndex, item: added });
    for (const fragment of chunk(call.argumentsJson, reply.chunkSize)) {
      yield event("response.function_call_arguments.delta", { ...at, delta: fragment });
    }
    yield event("response.function_call_arguments.done", { ...at, arguments: call.argumentsJson });
    yield event("response.output_item.done", {
      output_index: outputIndex,
      item: functionCallItem(ctx, i, "completed"),
    });
    outputIndex++;
  }
  yield event("response.completed", { response: responseObject(ctx, true) });
}

/** The Responses API's `error` event, numbered as the frame after the `after` written before it. */
function streamError(error: StreamError): SseFrame {
  const type = "error";
  const payload = { type, code: error.type ?? "server_error", message: error.message, param: null };
  return { event: type, data: { ...payload, sequence_number: error.after } };
}

/** A function call sent back without the reasoning item it followed: the real API's 400. */
function rejects(body: Record<string, unknown>): ErrorInfo | undefined {
  const input = Array.isArray(body.input)
    ? (body.input as { type?: string; id?: string; encrypted_content?: unknown }[])
    : [];
  const seen = new Map<string, { encrypted_content?: unknown }>();
  for (const item of input) {
    if (item?.type === "reasoning" && typeof item.id === "string") seen.set(item.id, item);
    const needed = item?.type === "function_call" ? AFTER_REASONING.exec(item.id ?? "")?.[1] : undefined;
    if (needed === undefined) continue;
    const reasoning = seen.get(needed);
    // With `store: false` the API keeps nothing: the item must come back whole, its encrypted content with it.
    if (reasoning && (body.store !== false || typeof reasoning.encrypted_content === "string")) continue;
    const message = reasoning
      ? `Item '${needed}' of type 'reasoning' was provided without its 'encrypted_content', and store is false.`
      : `Item '${item.id}' of type 'function_call' was provided without its required 'reasoning' item: '${needed}'.`;
    return { status: 400, message, type: "invalid_request_error" };
  }
  return undefined;
}

export const openaiResponses: WireFormatHandler = {
  format: "openai-responses",
  paths: ["/v1/responses", "/responses"],
  ...openaiAccess,
  streamError,
  rejects,
  stream,
  json: (ctx) => responseObject(ctx, true),
};
