// Google Gemini (Generative Language API): `POST /v1beta/models/{model}:streamGenerateContent?alt=sse` streams
// `GenerateContentResponse` chunks as data-only SSE; `:generateContent` answers with one. The model is in the
// path, streaming is chosen by the method, and function calls arrive whole (Gemini does not stream arguments).
import { chunk } from "./scripts.js";
import type { ErrorInfo, RenderContext, SseFrame, StreamError, WireFormatHandler } from "./types.js";

const PATH = /^\/(?:v1beta|v1)\/models\/([^/:]+):(streamGenerateContent|generateContent)$/;

/** google.rpc.Code names, as the API puts them in `error.status`. */
const STATUS_NAMES: Record<number, string> = {
  400: "INVALID_ARGUMENT",
  401: "UNAUTHENTICATED",
  403: "PERMISSION_DENIED",
  404: "NOT_FOUND",
  409: "ABORTED",
  429: "RESOURCE_EXHAUSTED",
  499: "CANCELLED",
  500: "INTERNAL",
  503: "UNAVAILABLE",
  504: "DEADLINE_EXCEEDED",
};

function errorBody(error: ErrorInfo): unknown {
  const status = error.type ?? STATUS_NAMES[error.status] ?? (error.status >= 500 ? "INTERNAL" : "UNKNOWN");
  return { error: { code: error.status, message: error.message, status } };
}

/** A chunk that is only the error envelope, as Gemini sends one when a stream fails. */
function streamError(error: StreamError): SseFrame {
  const status = error.type ?? "UNAVAILABLE";
  const code = Object.entries(STATUS_NAMES).find(([, name]) => name === status)?.[0] ?? "500";
  return { data: { error: { code: Number(code), message: error.message, status } } };
}

function usageMetadata(ctx: RenderContext, done: boolean) {
  const { input, output } = ctx.reply.usage;
  const prompt = { promptTokenCount: input, promptTokensDetails: [{ modality: "TEXT", tokenCount: input }] };
  if (!done) return { ...prompt, totalTokenCount: input };
  return { ...prompt, candidatesTokenCount: output, totalTokenCount: input + output };
}

/** Gemini signs a turn's thinking on its first function call only (parallel calls after it carry none). */
function functionCallParts(ctx: RenderContext): object[] {
  const signature = ctx.reply.reasoning?.signature;
  return ctx.reply.toolCalls.map((call, i) => ({
    functionCall: {
      // The Gemini API names no call ids; a scripted id is passed on for clients that read one.
      ...(call.id ? { id: call.id } : {}),
      name: call.name,
      args: JSON.parse(call.argumentsJson),
    },
    ...(i === 0 && signature ? { thoughtSignature: signature } : {}),
  }));
}

/** The thought summary, a part of its own marked `thought`. */
function thoughtParts(ctx: RenderContext): object[] {
  return ctx.reply.reasoning ? [{ text: ctx.reply.reasoning.text, thought: true }] : [];
}

/** With no function call, the signature rides on the last text part. */
function signedText(ctx: RenderContext, text: string, last: boolean): object {
  const signature = ctx.reply.reasoning?.signature;
  return last && signature && ctx.reply.toolCalls.length === 0
    ? { text, thoughtSignature: signature }
    : { text };
}

/**
 * A thinking model (Gemini 3; here any model named with "thinking") answers 400 when a function call of the current
 * turn comes back without its signature. The real message, so a client's error handling can be tried on it.
 */
function rejects(body: Record<string, unknown>, model: string): ErrorInfo | undefined {
  if (!model.includes("thinking")) return undefined;
  type Part = { functionCall?: { name?: string }; thoughtSignature?: unknown };
  const contents = Array.isArray(body.contents) ? (body.contents as { role?: string; parts?: Part[] }[]) : [];
  for (const [position, content] of contents.entries()) {
    if (content?.role !== "model" || !Array.isArray(content.parts)) continue;
    const first = content.parts.find((part) => part?.functionCall);
    const signed = typeof first?.thoughtSignature === "string" && first.thoughtSignature !== SKIP;
    if (!first || signed) continue;
    const message = `Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call \`default_api:${first.functionCall?.name}\` , position ${position + 1}. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.`;
    return { status: 400, message };
  }
  return undefined;
}

/** The documented sentinel a client may send in place of a signature it lost; the fake takes it as lost. */
const SKIP = "skip_thought_signature_validator";

function response(ctx: RenderContext, parts: object[], done: boolean) {
  return {
    candidates: [
      {
        content: { parts, role: "model" },
        ...(done ? { finishReason: "STOP" } : {}),
        index: 0,
      },
    ],
    usageMetadata: usageMetadata(ctx, done),
    modelVersion: ctx.model,
    responseId: `resp_fake${ctx.seq}`,
  };
}

function* stream(ctx: RenderContext): Iterable<SseFrame> {
  const { reply } = ctx;
  const pieces = chunk(reply.text, reply.chunkSize);
  const calls = functionCallParts(ctx);
  // The last chunk carries the finish reason and the full usage: the tool calls when there are any, else the
  // last piece of text (an empty reply is one empty text part).
  if (pieces.length === 0 && calls.length === 0) pieces.push("");
  const thoughts = thoughtParts(ctx);
  if (thoughts.length > 0) yield { data: response(ctx, thoughts, false) };
  for (const [i, piece] of pieces.entries()) {
    const last = i === pieces.length - 1 && calls.length === 0;
    const part = signedText(ctx, piece, i === pieces.length - 1);
    yield { data: response(ctx, [part], last), delayMs: i > 0 ? reply.delayMs : undefined };
  }
  if (calls.length > 0) yield { data: response(ctx, calls, true) };
}

function json(ctx: RenderContext): unknown {
  const parts: object[] =
    ctx.reply.text !== "" || ctx.reply.toolCalls.length === 0 ? [signedText(ctx, ctx.reply.text, true)] : [];
  return response(ctx, [...thoughtParts(ctx), ...parts, ...functionCallParts(ctx)], true);
}

export const gemini: WireFormatHandler = {
  format: "gemini",
  paths: [],
  matches: (path) => PATH.test(path),
  modelFrom: (path) => PATH.exec(path)?.[1],
  streams: (_body, path) => PATH.exec(path)?.[2] === "streamGenerateContent",
  // The official clients send the key as `x-goog-api-key`; REST examples put it in `?key=`.
  authorized: (headers, apiKey, query) =>
    headers["x-goog-api-key"] === apiKey || query?.get("key") === apiKey,
  errorBody,
  streamError,
  rejects,
  unauthorized: () => ({
    status: 400,
    message: "API key not valid. Please pass a valid API key.",
    type: "INVALID_ARGUMENT",
  }),
  stream,
  json,
};
