// Public types of the fake model provider. Kept apart from the server so the wire-format files can share them
// without importing each other.

export type WireFormat = "openai-chat" | "anthropic" | "openai-responses" | "gemini" | "ollama";

export interface TokenUsage {
  input: number;
  output: number;
}

export interface ScriptedToolCall {
  /** Defaults to a deterministic id in the format's style (`call_…`, `toolu_…`). */
  id?: string;
  name: string;
  arguments: Record<string, unknown>;
  /**
   * OpenAI Responses only: the namespace of a namespaced tool (Codex offers MCP tools as
   * `{"type":"namespace","name":"mcp__srv","tools":[…]}` and expects the call back with the namespace set).
   */
  namespace?: string;
  /** The arguments as raw JSON text instead, for ones JSON.stringify cannot write (nested too deep). */
  argumentsJson?: string;
}

export type ScriptStep =
  /**
   * Streams `text` in chunks of `chunkSize` characters, waiting `delayMs` between chunks. With `breakAfter`, only
   * that many stream frames are written before the connection is dropped: a broken stream. With `endAfter`, only
   * that many are written and the response then ends as if it were whole: a stream cut short without an error.
   * With `streamError`, only `after` frames are written, then the provider's own error event, as a provider that
   * fails after its 200 sends it (Anthropic's `overloaded_error`), and the response ends.
   */
  | {
      text: string;
      chunkSize?: number;
      delayMs?: number;
      usage?: TokenUsage;
      breakAfter?: number;
      endAfter?: number;
      streamError?: StreamError;
      /** Only that many stream frames are written, then nothing, the connection held open: a stalled stream. */
      stallAfter?: number;
      /** Anthropic only: the stop_reason sent instead of "end_turn" (a "refusal", say). */
      stopReason?: string;
      reasoning?: ScriptedReasoning;
      /**
       * OpenAI only: the text is the model's refusal, streamed as Chat's `refusal` deltas with `content: null`, or
       * as the Responses API's `response.refusal.delta` events in a `refusal` content part.
       */
      refusal?: boolean;
    }
  /** Tool calls, optionally preceded by text in the same turn (as real models often do). */
  | {
      toolCalls: ScriptedToolCall[];
      text?: string;
      usage?: TokenUsage;
      reasoning?: ScriptedReasoning;
      /** OpenAI Chat only: the calls' `tool_calls[index]` deltas alternate, as some servers stream parallel calls. */
      interleave?: boolean;
      chunkSize?: number;
      /** Only that many stream frames are written, then nothing, the connection held open: a stalled stream. */
      stallAfter?: number;
    }
  /**
   * An HTTP error in the provider's own error JSON. Note that the official SDKs retry 408/409/429/5xx, and each
   * retry is a new request that consumes the next step; `retry` sets the `x-should-retry` header both SDKs obey.
   * `page` is sent as the body instead, as text/html: a proxy's error page, not the provider's JSON.
   * `retryAfter` is sent as the `retry-after` header: the seconds the provider asks a client to wait.
   */
  | {
      error: {
        status: number;
        message: string;
        type?: string;
        retry?: boolean;
        page?: string;
        retryAfter?: number;
      };
    }
  /** Accepts the request and never answers, until the client aborts or the server closes. */
  | { hang: true };

/**
 * The model's thinking, streamed before its text, with the opaque token each provider demands back in the next
 * request of a turn with tools: Anthropic's `thinking` block and its `signature_delta`; OpenAI Responses' `reasoning`
 * item and its `encrypted_content` (sent only when the request's `include` asks for it); Gemini's `thought` part,
 * and the `thoughtSignature` on the first function call (or the last text part).
 */
export interface ScriptedReasoning {
  text: string;
  signature: string;
}

/** An error a provider sends inside a stream it has begun, in that provider's own shape. */
export interface StreamError {
  /** Frames of the reply written before the error. */
  after: number;
  message: string;
  /** The provider's error type or code ("overloaded_error", "server_error"); each format has a default. */
  type?: string;
}

export interface FakeProviderRequest {
  /** 1-based position in the log; restarts after reset(). */
  seq: number;
  format: WireFormat;
  path: string;
  headers: Record<string, string>;
  /** Parsed JSON body; the raw text when it was not valid JSON (answered with a 400). */
  // biome-ignore lint/suspicious/noExplicitAny: request bodies are arbitrary JSON and tests dig into them freely
  body: any;
  receivedAt: number;
  /** Set when the client went away before the reply was complete. */
  aborted?: boolean;
}

export interface FakeProvider {
  /**
   * e.g. http://127.0.0.1:12345. SDK base URLs are `${url}/v1` (OpenAI, Anthropic), `${url}/v1beta` (Gemini) and
   * `${url}/api` (Ollama).
   */
  url: string;
  /** Every model request received (the five model endpoints, rejected ones included), in order. */
  requests: FakeProviderRequest[];
  /** Queues replies, one step consumed per accepted model request, FIFO. */
  script(steps: ScriptStep[]): void;
  /** Used when the queue is empty; the default echoes the last user message text as "echo: <text>". */
  setFallback(fn: (req: FakeProviderRequest) => ScriptStep): void;
  /** Clears the request log and queued steps (the fallback stays). */
  reset(): void;
  /** Resolves once `count` model requests have been received (rejects after `timeoutMs`). */
  waitForRequests(count: number, timeoutMs?: number): Promise<FakeProviderRequest[]>;
  /** Stops listening and destroys open connections, hung and streaming ones included. */
  close(): Promise<void>;
}

export interface StartOptions {
  /** 0 (the default) picks a free port. */
  port?: number;
  /** The address it listens on; default 127.0.0.1 (another of this host's: a provider "elsewhere" by address). */
  host?: string;
  /**
   * When set, model requests must carry it: `Authorization: Bearer` for the OpenAI formats; `x-api-key` or
   * `Authorization: Bearer` for Anthropic (the official SDK sends the latter since 1.x).
   */
  apiKey?: string;
}

/** A step after resolution: what the wire-format writers render. */
export interface Reply {
  text: string;
  toolCalls: { id?: string; name: string; namespace?: string; argumentsJson: string }[];
  chunkSize: number;
  delayMs: number;
  usage: TokenUsage;
  /** Drop the connection after this many stream frames. */
  breakAfter?: number;
  /** End the response, as if whole, after this many stream frames. */
  endAfter?: number;
  /** Write nothing more after this many stream frames, and hold the connection open. */
  stallAfter?: number;
  /** Send the provider's own error event after this many stream frames, and end. */
  streamError?: StreamError;
  /** Anthropic only: the stop_reason instead of the one the reply's content implies. */
  stopReason?: string;
  reasoning?: ScriptedReasoning;
  interleave?: boolean;
  refusal?: boolean;
}

/** One server-sent event. `data` is JSON-encoded unless it is a string. */
export interface SseFrame {
  event?: string;
  data: unknown;
  /** Milliseconds to wait before writing this frame (a slow stream). */
  delayMs?: number;
}

/** Everything a wire-format renderer needs to answer one request. */
export interface RenderContext {
  seq: number;
  // biome-ignore lint/suspicious/noExplicitAny: see FakeProviderRequest.body
  body: any;
  model: string;
  reply: Reply;
  /** Unix seconds. */
  created: number;
}

export interface ErrorInfo {
  status: number;
  message: string;
  type?: string;
  code?: string;
}

/** The per-format behaviour the server dispatches to. */
export interface WireFormatHandler {
  format: WireFormat;
  paths: readonly string[];
  /** For formats whose paths carry a variable part (Gemini's `/v1beta/models/{model}:generateContent`). */
  matches?(path: string): boolean;
  /** The model named in the path, for formats that put it there rather than in the body. */
  modelFrom?(path: string): string | undefined;
  /** Whether to answer with a stream; by default when the body says `"stream": true`. */
  streams?(body: Record<string, unknown>, path: string): boolean;
  /** How stream frames are written: server-sent events (the default) or one JSON object a line (Ollama). */
  framing?: "sse" | "ndjson";
  /** True when the request carries `apiKey` the way this provider expects it (`query` is the URL's query). */
  authorized(headers: Record<string, string>, apiKey: string, query?: URLSearchParams): boolean;
  errorBody(error: ErrorInfo): unknown;
  /**
   * The error the real API answers a request with before any model runs, when the request breaks one of its rules
   * (a function call sent back without the reasoning or signature it came with).
   */
  rejects?(body: Record<string, unknown>, model: string): ErrorInfo | undefined;
  /** The frame that reports an error inside a stream already begun. */
  streamError(error: StreamError): SseFrame;
  unauthorized(): ErrorInfo;
  stream(ctx: RenderContext): Iterable<SseFrame>;
  json(ctx: RenderContext): unknown;
}
