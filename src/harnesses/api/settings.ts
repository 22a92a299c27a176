// The api harness's own settings, from the session's `config.options`. The options a session carries are not
// all this harness's (agent definitions add their own: agent, working_dir, env, …), so other keys are left
// alone; the ones named here are checked, and a bad value is an error naming the field.
import { z } from "zod";
import { describeIssues } from "../../protocol/frames.js";
import { MAX_TIMER_MS } from "../../protocol/permissions.js";

/** US dollars per million tokens. Cache prices default to the input price. */
export const Price = z.strictObject({
  input: z.number().nonnegative(),
  output: z.number().nonnegative(),
  cache_read: z.number().nonnegative().optional(),
  cache_write: z.number().nonnegative().optional(),
});

export const DEFAULTS = {
  maxSteps: 50,
  retries: 2,
  retryBaseMs: 1_000,
  idleTimeoutMs: 300_000,
  compactAtTokens: 100_000,
  /** Models stop at a few hundred KB an answer (their output token limits); this is far past a turn of them. */
  maxTurnChars: 16 * 2 ** 20,
} as const;

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * Headers the HTTP client sets from the request itself. One from the session's options is at best ignored (host),
 * at worst stalls the request until the idle timeout (a content-length that is not the body's).
 */
const CLIENT_HEADERS = new Set([
  "host",
  "content-length",
  "transfer-encoding",
  "connection",
  "keep-alive",
  "upgrade",
  "te",
  "trailer",
  "expect",
]);

function headerNameProblem(name: string): string | undefined {
  if (!HEADER_NAME.test(name)) return "is not an HTTP header name (letters, digits and !#$%&'*+.^_`|~-)";
  if (CLIENT_HEADERS.has(name.toLowerCase())) return "is set by the HTTP client itself; leave it out";
  return undefined;
}

export const ApiOptions = z.object({
  /** Model requests per turn at most (each tool round is one): a runaway tool loop stops here. */
  max_steps: z.number().int().positive().optional(),
  /**
   * Characters of text, reasoning and tool arguments one turn's answers may stream together: a provider streaming
   * without end (or a huge answer) stops here instead of growing Brain's memory. Default 16 Mi.
   */
  max_turn_chars: z.number().int().positive().optional(),
  max_output_tokens: z.number().int().positive().optional(),
  temperature: z.number().min(0).max(2).optional(),
  /** Retries of a request that failed with a retryable status (408, 409, 429, 5xx) or a dropped connection. */
  retries: z.number().int().min(0).max(10).optional(),
  /** The first retry waits this long, doubling each time (a provider's retry-after wins when longer). */
  retry_base_ms: z.number().int().nonnegative().optional(),
  /** A stream that sends nothing for this long is a provider failure. */
  idle_timeout_ms: z
    .number()
    .int()
    .positive()
    // A longer timer would fire at once: every request would go quiet as it starts.
    .max(MAX_TIMER_MS, {
      message: `at most ${MAX_TIMER_MS} ms (about 24.8 days, the longest a timer can wait); leave it out for the default of ${DEFAULTS.idleTimeoutMs}`,
    })
    .optional(),
  /**
   * When the last request's input (and what came after it, estimated) reached this many tokens, the next turn starts by having the model summarise
   * the conversation so far; the summary replaces it in later requests. 0 turns compaction off.
   */
  compact_at_tokens: z.number().int().nonnegative().optional(),
  /**
   * OpenAI (`openai`, `openai-chat`): true treats the model as a reasoning model though the AI SDK does not know it
   * as one (a new or fine-tuned model, one behind a gateway under another name), false as not one though it does.
   * Only a reasoning model is asked for its encrypted reasoning, which must go back in the next request (Brain
   * sends `store: false`, so OpenAI keeps none); asking a model that does not reason fails it with a 400. Left
   * out, the SDK's own list decides. Other providers ignore it.
   */
  reasoning: z.boolean().optional(),
  /** The model's price, for `usage.cost` on each turn (OpenRouter reports the cost itself). */
  price: Price.optional(),
  /** Extra HTTP headers on every model request (a proxy's routing header, say). */
  headers: z
    .record(z.string(), z.string().regex(/^[^\r\n\0]*$/, "must not hold a line break or NUL"))
    .superRefine((headers, ctx) => {
      for (const name of Object.keys(headers)) {
        const problem = headerNameProblem(name);
        if (problem) ctx.addIssue({ code: "custom", path: [name], message: problem });
      }
    })
    .optional(),
});

/**
 * The options only the operator sets (defaults, agent definitions), and why, for a network caller's refusal.
 * `headers` ride on every request beside the operator's key: as the credential proxy drops them from a CLI's
 * requests. `price` makes each turn's usage.cost: a tenant setting its own would pay what it chose.
 */
export const API_OPERATOR_OPTIONS: Readonly<Record<string, string>> = {
  headers:
    "they ride on every request beside the operator's key, and can choose whose account it is used for (OpenAI-Organization, OpenAI-Project), replace it, or route a gateway elsewhere",
  price: "it sets each turn's usage.cost, which the operator may bill its tenants on",
};

/** The options a network caller may set: those that tune the model loop only. */
export const API_CLIENT_OPTIONS = Object.keys(ApiOptions.shape).filter(
  (key) => !(key in API_OPERATOR_OPTIONS),
);

export type Price = z.infer<typeof Price>;
export type ApiOptions = z.infer<typeof ApiOptions>;

export interface ApiSettings {
  maxSteps: number;
  maxTurnChars: number;
  maxOutputTokens?: number;
  temperature?: number;
  retries: number;
  retryBaseMs: number;
  idleTimeoutMs: number;
  compactAtTokens: number;
  reasoning?: boolean;
  price?: Price;
  headers: Record<string, string>;
}

export class SettingsError extends Error {
  override name = "SettingsError";
}

export function parseSettings(options: Record<string, unknown> | undefined): ApiSettings {
  const parsed = ApiOptions.safeParse(options ?? {});
  if (!parsed.success) {
    const known = Object.keys(ApiOptions.shape).join(", ");
    throw new SettingsError(
      `bad config.options for the api harness: ${describeIssues(parsed.error)} (known options: ${known})`,
    );
  }
  const o = parsed.data;
  return {
    maxSteps: o.max_steps ?? DEFAULTS.maxSteps,
    maxTurnChars: o.max_turn_chars ?? DEFAULTS.maxTurnChars,
    ...(o.max_output_tokens === undefined ? {} : { maxOutputTokens: o.max_output_tokens }),
    ...(o.temperature === undefined ? {} : { temperature: o.temperature }),
    retries: o.retries ?? DEFAULTS.retries,
    retryBaseMs: o.retry_base_ms ?? DEFAULTS.retryBaseMs,
    idleTimeoutMs: o.idle_timeout_ms ?? DEFAULTS.idleTimeoutMs,
    compactAtTokens: o.compact_at_tokens ?? DEFAULTS.compactAtTokens,
    ...(o.reasoning === undefined ? {} : { reasoning: o.reasoning }),
    ...(o.price ? { price: o.price } : {}),
    headers: o.headers ?? {},
  };
}
