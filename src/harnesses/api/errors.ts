// Provider failures in words a user can act on: the HTTP status and the provider's own message, a dropped
// stream, a silent one. Which of them are worth another try is decided here too.
import { APICallError, JSONParseError, TypeValidationError } from "ai";
import { headOf } from "../../core/redact.js";

/**
 * The most of a provider's own message an error gives: a gateway that echoes the request it refused (a conversation
 * of megabytes) would otherwise put it whole into the turn's error, the log and every client's stream.
 */
const MESSAGE_CHARS = 1000;

/** The provider's message from an error body in any of the formats we speak; undefined when there is none. */
export function messageInBody(body: string | undefined): string | undefined {
  if (!body) return undefined;
  try {
    const parsed = JSON.parse(body) as { error?: unknown; message?: unknown; response?: { error?: unknown } };
    // A Responses stream's `response.failed` event, which the SDK passes on as the body, holds it in its response.
    const error = (parsed.error ?? parsed.response?.error) as { message?: unknown } | string | undefined;
    if (typeof error === "string") return quoted(error, MESSAGE_CHARS);
    if (error && typeof error.message === "string") return quoted(error.message, MESSAGE_CHARS);
    if (typeof parsed.message === "string") return quoted(parsed.message, MESSAGE_CHARS);
  } catch {
    // not JSON: a proxy's HTML page, say
  }
  // Cut between words: a key the page echoes, cut in two, would leave its start where no redactor knows it.
  return body.length > 300 ? `${headOf(body, 300)}…` : body;
}

/** The innermost cause's message: a dropped connection surfaces as "terminated" caused by "other side closed". */
function rootCause(err: unknown): string | undefined {
  let cause = (err as { cause?: unknown })?.cause;
  let message: string | undefined;
  for (let depth = 0; cause && depth < 5; depth++) {
    if (cause instanceof Error) message = cause.message;
    cause = (cause as { cause?: unknown }).cause;
  }
  return message;
}

/**
 * An error the provider sent inside a stream it had begun (Anthropic's `error` event, an OpenAI chunk holding
 * `error`): the SDKs pass it on as the plain object they parsed, `{type, message}` or `{error: {message}}`.
 */
interface StreamedError {
  message: string;
  kind?: string;
  retryable?: boolean;
}

function streamedError(err: unknown): StreamedError | undefined {
  if (err === null || typeof err !== "object" || err instanceof Error) return undefined;
  const outer = err as { message?: unknown; error?: unknown };
  const body = (typeof outer.message === "string" ? outer : outer.error) as
    | { message?: unknown; type?: unknown; code?: unknown; isRetryable?: unknown }
    | undefined;
  if (typeof body?.message !== "string") return undefined;
  const kind = [body.type, body.code].find((k) => typeof k === "string" && k !== "" && k !== "error");
  const flag = (outer as { isRetryable?: unknown }).isRetryable ?? body.isRetryable;
  return {
    message: body.message,
    ...(typeof kind === "string" ? { kind } : {}),
    ...(typeof flag === "boolean" ? { retryable: flag } : {}),
  };
}

/** The streamed error types that say "try again later", in the words of Anthropic and OpenAI. */
const TRANSIENT = /overloaded|rate_limit|server_error|api_error|unavailable/i;

/**
 * Anthropic's package reads a stream's first event before it hands the stream on, and an `error` event there comes
 * out as an APICallError of its own making: status 500 (529 when overloaded), retryable only when overloaded, the
 * 200's headers, and as its body the event's error, or the parse failure of an event that is not JSON. The provider
 * answered 200: this is what it streamed, told and judged as the same event later in the stream would be.
 */
function streamedFirst(err: unknown): unknown {
  if (!APICallError.isInstance(err)) return err;
  if (!err.responseHeaders?.["content-type"]?.includes("text/event-stream")) return err;
  try {
    const body = JSON.parse(err.responseBody ?? "") as unknown;
    return body !== null && typeof body === "object" ? body : err;
  } catch {
    return err;
  }
}

/** A stream event the SDK could not read: not JSON, or not in the shape of the provider's API. */
function unreadable(err: unknown): { text: string; what: string } | undefined {
  if (JSONParseError.isInstance(err)) return { text: err.text, what: "not JSON" };
  if (TypeValidationError.isInstance(err)) {
    return { text: JSON.stringify(err.value) ?? String(err.value), what: "not in the form of its API" };
  }
  // As Anthropic's package hands on a first event it cannot read (streamedFirst): the parse or validation error,
  // as JSON (which said "[object Object]" of a first event in another shape).
  const named = err as { name?: unknown; text?: unknown; value?: unknown } | null;
  if (named?.name === "AI_JSONParseError" && typeof named.text === "string")
    return { text: named.text, what: "not JSON" };
  if (named?.name === "AI_TypeValidationError" && named.value !== undefined)
    return { text: JSON.stringify(named.value), what: "not in the form of its API" };
  return undefined;
}

/**
 * The event, content block or delta type an event names that the SDK package does not know, when that is all that
 * is wrong with it: a provider adds such types within one version of its API (Anthropic's versioning policy asks
 * clients to ignore the ones they do not know), and one the package cannot read must not fail every turn.
 * Undefined for any other error, a known event in another shape included.
 */
export function unknownEventType(err: unknown): string | undefined {
  if (!TypeValidationError.isInstance(err)) return undefined;
  const issues = (err.cause as { issues?: unknown } | undefined)?.issues;
  if (!Array.isArray(issues) || issues.length !== 1) return undefined;
  const issue = issues[0] as { code?: unknown; discriminator?: unknown; path?: unknown };
  const path = issue.path;
  if (issue.code !== "invalid_union" || typeof issue.discriminator !== "string" || !Array.isArray(path))
    return undefined;
  if (path.at(-1) !== issue.discriminator) return undefined;
  let named: unknown = err.value;
  for (const key of path) named = (named as Record<string, unknown> | null)?.[key as string];
  if (typeof named !== "string") return undefined;
  if (path.length === 1) return quoted(named, 100);
  const top = (err.value as Record<string, unknown>)[issue.discriminator];
  return `${typeof top === "string" ? quoted(top, 100) : "an event"} of ${path.join(".")} "${quoted(named, 100)}"`;
}

/** What the provider sent, in an error: its head, cut between words (as messageInBody's), and how long it was. */
function quoted(text: string, max = 200): string {
  return text.length <= max ? text : `${headOf(text, max)}… (${text.length} characters)`;
}

/**
 * What to check on the statuses a provider's own words may leave unexplained (Anthropic's 401 says only "invalid
 * x-api-key", a 404 only "model: x" or "Not Found"): the fix is in Brain's config, not the provider's.
 */
const STATUS_HINTS: Record<number, string> = {
  401: "; it refused the API key: check the key the session's provider is given (the variable its api_key_env names)",
  404: "; check the model's name (config.model) and the provider's base_url",
};

/** The model a request was for, as config.model names it: which of a user's sessions an error is about. */
export interface RequestedModel {
  provider: string;
  modelId: string;
}

/**
 * `anthropic model "claude-…"`: the subject of every error a request makes, so that a user with sessions on several
 * models can tell which model id a 404 or a 400 was about, and fix config.model. The key has no part in it.
 */
export function modelNamed({ provider, modelId }: RequestedModel): string {
  return `${provider} model ${JSON.stringify(modelId.length > 200 ? `${modelId.slice(0, 200)}…` : modelId)}`;
}

export function describeProviderError(requested: RequestedModel, thrown: unknown): string {
  const model = modelNamed(requested);
  const err = streamedFirst(thrown);
  const bad = unreadable(err);
  if (bad) {
    // The SDK's own message holds the whole event: a provider or proxy streaming junk would fill the log with it.
    return `${model} sent a stream event that is ${bad.what}: ${quoted(bad.text)}; check the provider, or the proxy at its base URL`;
  }
  const streamed = streamedError(err);
  if (streamed) {
    const kind = streamed.kind ? `${streamed.kind}: ` : "";
    return `${model} reported an error mid-stream: ${kind}${quoted(streamed.message, MESSAGE_CHARS)}`;
  }
  if (APICallError.isInstance(err)) {
    const status = err.statusCode;
    if (status === undefined)
      return `could not reach ${model} at ${originOf(err.url)}: ${rootCause(err) ?? err.message}`;
    if (status >= 200 && status < 300) {
      return `the stream of ${model} broke off: ${rootCause(err) ?? err.message}`;
    }
    const said = messageInBody(err.responseBody) ?? err.message;
    return `${model} answered HTTP ${status}: ${said}${STATUS_HINTS[status] ?? ""}`;
  }
  if (isTimeout(err)) return `${model} went quiet: ${(err as Error).message}`;
  if (isDropped(err)) return `the stream of ${model} broke off: ${rootCause(err) ?? (err as Error).message}`;
  if (isUnreachable(err)) return `could not reach ${model}: ${rootCause(err) ?? (err as Error).message}`;
  if (err instanceof Error) {
    const cause = rootCause(err);
    return cause && cause !== err.message ? `${model}: ${err.message}: ${cause}` : `${model}: ${err.message}`;
  }
  return `${model}: ${String(err)}`;
}

/**
 * Where a request went, without what could be a secret: the operator's base URL may carry a key in its path
 * (`https://gateway/KEY/v1`), its query or its user info, and this message goes into the session's log.
 */
function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return "the provider's base URL";
  }
}

/**
 * A connection lost mid-response or never made, as fetch throws it ("terminated", "fetch failed"). The OpenAI,
 * Anthropic and Gemini packages wrap it in an APICallError; OpenRouter's and Ollama's pass it on as it is.
 */
const isDropped = (err: unknown) => err instanceof TypeError && err.message === "terminated";
const isUnreachable = (err: unknown) => err instanceof TypeError && err.message === "fetch failed";

function isTimeout(err: unknown): boolean {
  return err instanceof Error && (err.name === "TimeoutError" || /timed? ?out/i.test(err.message));
}

/**
 * Worth another try: the SDK's verdict for HTTP errors (408, 409, 429, 5xx, x-should-retry), network failures, a
 * stream that ended before the model finished, and
 * for an error streamed before any text, the SDK's verdict or its type's (Anthropic's overloaded_error).
 */
export function isRetryable(thrown: unknown): boolean {
  const err = streamedFirst(thrown);
  if (unreadable(err)) return false;
  if (APICallError.isInstance(err)) return err.isRetryable;
  const streamed = streamedError(err);
  if (streamed) return streamed.retryable ?? TRANSIENT.test(streamed.kind ?? "");
  return isTimeout(err) || isDropped(err) || isUnreachable(err) || isUnfinished(err);
}

/**
 * A stream that ended cleanly before the model finished (step.ts's UnfinishedStreamError): a dropped stream by
 * another name (a proxy or load balancer closing it), worth another try while nothing of it was shown.
 */
const isUnfinished = (err: unknown) => err instanceof Error && err.name === "UnfinishedStreamError";

/**
 * What the turn's error adds when a status that may pass (429, 529, 503: busy or rate-limited) outlasted the
 * retries: that it may, and the two ways on. A status with a fix of its own (STATUS_HINTS) keeps that one alone.
 */
export function passingHint(err: unknown, retries: number): string {
  if (!APICallError.isInstance(err) || !err.isRetryable) return "";
  const status = err.statusCode ?? 0;
  if (status < 400 || STATUS_HINTS[status]) return "";
  return `; it may pass: prompt again later, or raise config.options.retries (now ${retries})`;
}

/**
 * How long the provider asked us to wait (`retry-after-ms`, `retry-after` seconds or date, or in the body as Gemini
 * says it), if it did.
 */
export function retryAfterMs(err: unknown): number | undefined {
  if (!APICallError.isInstance(err)) return undefined;
  const headers = err.responseHeaders ?? {};
  const ms = Number(headers["retry-after-ms"]);
  if (Number.isFinite(ms) && ms >= 0) return ms;
  const after = headers["retry-after"];
  const seconds = Number(after);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  // HTTP also lets it be a date (RFC 9110), as proxies and gateways in front of a provider send it.
  const at = after === undefined ? Number.NaN : Date.parse(after);
  if (Number.isFinite(at)) return Math.max(0, at - Date.now());
  return retryDelayInBody(err.responseBody);
}

/**
 * Gemini sends no retry-after header with its 429: the wait is in the body's google.rpc.RetryInfo (`"retryDelay":
 * "37s"`). Retried sooner, every attempt fails the same way and the turn fails though the provider said when.
 */
function retryDelayInBody(body: string | undefined): number | undefined {
  if (!body?.includes("retryDelay")) return undefined;
  try {
    const details = (JSON.parse(body) as { error?: { details?: unknown } }).error?.details;
    if (!Array.isArray(details)) return undefined;
    for (const detail of details) {
      const delay = (detail as { retryDelay?: unknown } | null)?.retryDelay;
      const seconds = typeof delay === "string" ? /^(\d+(?:\.\d+)?)s$/.exec(delay)?.[1] : undefined;
      if (seconds !== undefined) return Number(seconds) * 1000;
    }
  } catch {
    // not JSON
  }
  return undefined;
}

/** The longest Brain waits between two tries of one request, a turn being held open all the while. */
export const MAX_RETRY_WAIT_MS = 60_000;

/** Attempt n (0-based) waits base·2ⁿ with ±20 % jitter, at least what the provider asked, at most a minute. */
export function backoffMs(attempt: number, baseMs: number, err: unknown): number {
  const jitter = 0.8 + Math.random() * 0.4;
  const computed = baseMs * 2 ** attempt * jitter;
  return Math.min(MAX_RETRY_WAIT_MS, Math.max(computed, retryAfterMs(err) ?? 0));
}

/**
 * When the provider asked for a longer wait than Brain's between tries, what the turn's error adds: a try sooner
 * fails the same way (a quota resets when it resets), so the turn fails at once, saying when to try again.
 */
export function waitTooLong(err: unknown, now = Date.now()): string | undefined {
  const asked = retryAfterMs(err);
  if (asked === undefined || asked <= MAX_RETRY_WAIT_MS) return undefined;
  const at = new Date(now + asked).toISOString().replace(/\.\d+Z$/, "Z");
  return `; it asked for a wait of ${Math.ceil(asked / 1000)} s, longer than the ${MAX_RETRY_WAIT_MS / 1000} s Brain waits between tries: prompt again after ${at}`;
}
