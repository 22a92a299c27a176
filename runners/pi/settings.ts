// Everything the runner needs, from the `open` frame alone: the model (config.model as `provider/model`), where
// it is and how to speak to it (provider.base_url, provider.api, provider.api_key), and the runner's own
// settings (config.options). Nothing comes from the environment.
import type { Api, CacheRetention, Model } from "@mariozechner/pi-ai";
import { z } from "zod";
import { RunnerFailure } from "../../sdk/ts/index.js";
import type { OpenParams } from "../../src/protocol/runner.js";

/** The wire formats pi-ai speaks that this runner supports, under pi-ai's names. */
export const WIRE_APIS = ["openai-completions", "openai-responses", "anthropic-messages"] as const;
export type WireApi = (typeof WIRE_APIS)[number];

/** Other names people use for the same formats (the fake provider's among them). */
const API_ALIASES: Record<string, WireApi> = {
  openai: "openai-completions",
  "openai-chat": "openai-completions",
  "chat-completions": "openai-completions",
  responses: "openai-responses",
  anthropic: "anthropic-messages",
  messages: "anthropic-messages",
};

/** Vendor endpoints used only when the provider prefix names the vendor and no base_url is given. */
const VENDOR_URLS: Record<string, { api: WireApi; url: string }> = {
  openai: { api: "openai-completions", url: "https://api.openai.com/v1" },
  anthropic: { api: "anthropic-messages", url: "https://api.anthropic.com" },
};

/** config.options understood by this runner. Unknown keys are ignored (defaults may be shared by harnesses). */
export const PiOptions = z.object({
  /** The model's context window in tokens: the base of the compaction threshold. */
  context_window: z.number().int().positive().default(128_000),
  /** Output tokens per model request. */
  max_tokens: z.number().int().positive().default(8_192),
  /** Compact when a request's context passes this share of the window. */
  compaction_threshold: z.number().gt(0).lte(1).default(0.8),
  /** Tokens of recent conversation kept verbatim by a compaction; 20 % of the window by default. */
  compaction_keep_tokens: z.number().int().positive().optional(),
  compaction: z.boolean().default(true),
  /** pi's thinking level; anything but "off" marks the model as a reasoning model. */
  thinking: z.enum(["off", "minimal", "low", "medium", "high", "xhigh"]).default("off"),
  temperature: z.number().min(0).optional(),
  /** Retries of a failed request (429, 5xx) by the vendor SDK, and its per-request timeout. */
  max_retries: z.number().int().min(0).default(2),
  timeout_ms: z.number().int().positive().default(600_000),
  cache_retention: z.enum(["none", "short", "long"]).optional(),
  /** Several tool calls of one model reply run concurrently (Brain allows 32 in flight) or one by one. */
  tool_execution: z.enum(["parallel", "sequential"]).default("parallel"),
  /** pi-ai's per-format compatibility switches (e.g. `{"maxTokensField": "max_tokens"}`), passed through. */
  compat: z.record(z.string(), z.unknown()).optional(),
});
export type PiOptions = z.infer<typeof PiOptions>;

export interface PiSettings {
  model: Model<Api>;
  /** Undefined for endpoints that take no key: then no auth header is sent at all. */
  apiKey: string | undefined;
  systemPrompt: string;
  options: PiOptions;
  compaction: { enabled: boolean; threshold: number; keepTokens: number; contextWindow: number };
  request: { maxRetries: number; timeoutMs: number; cacheRetention?: CacheRetention; temperature?: number };
  /** Option keys this runner does not know, for a note on stderr. */
  ignoredOptions: string[];
}

export function readSettings(params: OpenParams): PiSettings {
  const parsed = PiOptions.safeParse(params.config.options ?? {});
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `options.${i.path.join(".")}: ${i.message}`).join("; ");
    throw new RunnerFailure("brain_error", `invalid config for runner pi: ${problems}`);
  }
  const options = parsed.data;
  const known = new Set(Object.keys(PiOptions.shape));
  const ignoredOptions = Object.keys(params.config.options ?? {}).filter((key) => !known.has(key));
  return {
    model: buildModel(params, options),
    apiKey: params.provider.api_key || undefined,
    systemPrompt: params.config.system_prompt ?? "",
    options,
    compaction: {
      enabled: options.compaction,
      threshold: options.compaction_threshold,
      keepTokens: options.compaction_keep_tokens ?? Math.floor(options.context_window * 0.2),
      contextWindow: options.context_window,
    },
    request: {
      maxRetries: options.max_retries,
      timeoutMs: options.timeout_ms,
      ...(options.cache_retention ? { cacheRetention: options.cache_retention } : {}),
      ...(options.temperature !== undefined ? { temperature: options.temperature } : {}),
    },
    ignoredOptions,
  };
}

/** `provider/model` → pi's Model object, at the base URL from the open frame. */
export function buildModel(params: OpenParams, options: PiOptions): Model<Api> {
  const spec = params.config.model;
  if (!spec) {
    throw new RunnerFailure(
      "brain_error",
      'runner pi needs config.model, as "provider/model" (e.g. openai/gpt-4.1)',
    );
  }
  const slash = spec.indexOf("/");
  const prefix = slash > 0 ? spec.slice(0, slash) : "";
  const id = slash > 0 ? spec.slice(slash + 1) : spec;
  if (!id) throw new RunnerFailure("brain_error", `config.model "${spec}" names no model after the "/"`);
  const { api_key, api: named, base_url } = params.provider;
  // The prefix picks the vendor's URL: a key that says neither its vendor nor its endpoint would go wherever a
  // client's model names (the Anthropic key to OpenAI with "openai/gpt-4o").
  if (api_key && named === undefined && !base_url?.trim()) {
    throw new RunnerFailure(
      "brain_error",
      `runner pi: the session's provider gives a key but neither "api" nor "base_url", so the model's prefix alone would choose the vendor that key is sent to; the operator must set the provider's api (the vendor the key is for, e.g. "anthropic" or "openai") or its base_url`,
    );
  }
  const api = resolveApi(named, prefix);
  return {
    id,
    name: id,
    api,
    // A neutral provider name: vendor names switch on pi-ai's env-key lookups and vendor quirks, and replay
    // compares provider + api + model, so it must never change.
    provider: "brain",
    baseUrl: resolveBaseUrl(params.provider.base_url, api, prefix),
    reasoning: options.thinking !== "off",
    input: ["text", "image"],
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
    contextWindow: options.context_window,
    maxTokens: options.max_tokens,
    ...(options.compat ? { compat: options.compat as Model<Api>["compat"] } : {}),
  };
}

/** provider.api in pi-ai's names or a common alias; without it, the provider prefix decides. */
export function resolveApi(api: string | undefined, prefix: string): WireApi {
  if (api) {
    const known = (WIRE_APIS as readonly string[]).includes(api) ? (api as WireApi) : API_ALIASES[api];
    if (!known) {
      throw new RunnerFailure(
        "brain_error",
        `provider.api "${api}" is not supported by runner pi; use one of ${WIRE_APIS.join(", ")}`,
      );
    }
    return known;
  }
  return prefix === "anthropic" ? "anthropic-messages" : "openai-completions";
}

/**
 * The endpoint's base URL, as the vendor SDKs want it: OpenAI styles include `/v1`, Anthropic's does not (its
 * SDK appends `/v1/messages`), so a trailing `/v1` is dropped there. An empty URL is never passed on: the
 * SDKs would fall back to the vendor's public endpoint on their own.
 */
export function resolveBaseUrl(baseUrl: string | undefined, api: WireApi, prefix: string): string {
  let url = baseUrl?.trim().replace(/\/+$/, "");
  if (!url) {
    const vendor = VENDOR_URLS[prefix];
    if (!vendor || vendor.api !== api) {
      throw new RunnerFailure(
        "brain_error",
        `runner pi needs provider.base_url for model provider "${prefix}"`,
      );
    }
    url = vendor.url;
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new RunnerFailure("brain_error", `provider.base_url "${url}" is not a URL`);
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    throw new RunnerFailure("brain_error", `provider.base_url "${url}" must be http or https`);
  }
  if (api === "anthropic-messages") url = url.replace(/\/v1$/, "");
  return url;
}
