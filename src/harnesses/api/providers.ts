// Which AI SDK provider serves a `provider:model` string, where its key and base URL come from, and how the
// model object is made. A session with a provider takes its key and base URL from it alone; only a session with
// none, on a host that hands over its environment (the operator's own `brain run`), reads the usual variables.
// Nothing here reads `process.env`, and every SDK provider gets an explicit base URL, since the SDKs would
// otherwise read OPENAI_BASE_URL or ANTHROPIC_BASE_URL from the process themselves.
import { createAnthropic } from "@ai-sdk/anthropic";
import { createGoogleGenerativeAI } from "@ai-sdk/google";
import { createOpenAI } from "@ai-sdk/openai";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { createOpenRouter } from "@openrouter/ai-sdk-provider";
import type { LanguageModel } from "ai";
import { createOllama } from "ollama-ai-provider-v2";
import { Agent } from "undici";
import type { ProviderCredentials } from "../../protocol/runner.js";
import { MaskedEcho } from "../cli/masked-echo.js";
import { withBoundedAnswers } from "./answer-bytes.js";
import { UnknownFirstEvents } from "./first-events.js";
import { withoutRedirects } from "./no-redirects.js";
import { StreamErrorLines } from "./ollama-errors.js";

export interface ModelArgs {
  modelId: string;
  baseURL?: string;
  apiKey?: string;
  headers: Record<string, string>;
  fetch: typeof globalThis.fetch;
}

interface ProviderKind {
  /** Variables tried in order for the key; the first is the one an error tells the user to set. */
  keyEnv: string[];
  keyRequired: boolean;
  baseUrlEnv: string[];
  /** Where the vendor's API is when nothing names a base URL (the SDK's own default, given explicitly). */
  defaultBaseUrl?: string;
  /** The vendor whose key this kind sends, when it is another kind's too ("openai-chat": the OpenAI key). */
  vendor?: string;
  /** Puts a base URL from config or environment into the form the SDK provider wants. */
  normalizeBaseUrl?: (url: string) => string;
  baseUrlRequired?: boolean;
  /**
   * The model id goes into the request's URL path (Gemini's `/models/{model}:streamGenerateContent`), not its body:
   * only a name the path keeps as one (or two, `tunedModels/x`) plain segments may be one.
   */
  modelInPath?: boolean;
  /** Its SDK package drops the provider's error line mid-stream: a StreamErrorLines fetch keeps it (Ollama). */
  dropsStreamErrors?: boolean;
  /**
   * Its SDK package fails a request whose first event is of a type it does not know: an UnknownFirstEvents fetch
   * takes such events out (Anthropic).
   */
  failsOnUnknownFirstEvent?: boolean;
  /** Its SDK package drops a Chat Completions `refusal` delta (OpenRouter's): the step reads it from the raw chunks. */
  dropsRefusals?: boolean;
  create(args: ModelArgs): LanguageModel;
}

const trimSlash = (url: string) => url.replace(/\/+$/, "");

/** Anthropic's own SDKs and Claude Code take the host without `/v1`; the AI SDK wants it with. */
const withSuffix = (suffix: string) => (url: string) => {
  const trimmed = trimSlash(url);
  return trimmed.endsWith(suffix) ? trimmed : `${trimmed}${suffix}`;
};

/** `OLLAMA_HOST` may be a bare `host:port`, as the ollama CLI accepts it. */
function ollamaBaseUrl(url: string): string {
  const withScheme = /^[a-z]+:\/\//i.test(url) ? url : `http://${url}`;
  return withSuffix("/api")(withScheme);
}

const PROVIDERS: Record<string, ProviderKind> = {
  anthropic: {
    keyEnv: ["ANTHROPIC_API_KEY"],
    keyRequired: true,
    baseUrlEnv: ["ANTHROPIC_BASE_URL"],
    defaultBaseUrl: "https://api.anthropic.com/v1",
    normalizeBaseUrl: withSuffix("/v1"),
    failsOnUnknownFirstEvent: true,
    create: ({ modelId, ...rest }) => createAnthropic(rest)(modelId),
  },
  /** The Responses API, as `createOpenAI()(id)` does by default. */
  openai: {
    keyEnv: ["OPENAI_API_KEY"],
    keyRequired: true,
    baseUrlEnv: ["OPENAI_BASE_URL"],
    defaultBaseUrl: "https://api.openai.com/v1",
    create: ({ modelId, ...rest }) => createOpenAI(rest).responses(modelId),
  },
  /** Chat Completions, for servers (and models) that only speak that. */
  "openai-chat": {
    keyEnv: ["OPENAI_API_KEY"],
    keyRequired: true,
    baseUrlEnv: ["OPENAI_BASE_URL"],
    defaultBaseUrl: "https://api.openai.com/v1",
    vendor: "openai",
    create: ({ modelId, ...rest }) => createOpenAI(rest).chat(modelId),
  },
  gemini: {
    keyEnv: ["GEMINI_API_KEY", "GOOGLE_GENERATIVE_AI_API_KEY", "GOOGLE_API_KEY"],
    keyRequired: true,
    baseUrlEnv: ["GEMINI_BASE_URL"],
    defaultBaseUrl: "https://generativelanguage.googleapis.com/v1beta",
    modelInPath: true,
    create: ({ modelId, ...rest }) => createGoogleGenerativeAI(rest)(modelId),
  },
  openrouter: {
    keyEnv: ["OPENROUTER_API_KEY"],
    keyRequired: true,
    baseUrlEnv: ["OPENROUTER_BASE_URL"],
    defaultBaseUrl: "https://openrouter.ai/api/v1",
    // "strict" asks for usage in the stream; `usage.include` adds the cost OpenRouter charged.
    dropsRefusals: true,
    create: ({ modelId, ...rest }) =>
      createOpenRouter({ ...rest, compatibility: "strict" }).chat(modelId, { usage: { include: true } }),
  },
  /** A local Ollama needs no key; Ollama's cloud and authenticating proxies take a Bearer token. */
  ollama: {
    keyEnv: ["OLLAMA_API_KEY"],
    keyRequired: false,
    baseUrlEnv: ["OLLAMA_HOST"],
    defaultBaseUrl: "http://127.0.0.1:11434/api",
    normalizeBaseUrl: ollamaBaseUrl,
    dropsStreamErrors: true,
    create: ({ modelId, baseURL, apiKey, headers, fetch }) =>
      createOllama({
        ...(baseURL ? { baseURL } : {}),
        headers: { ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}), ...headers },
        fetch,
      })(modelId),
  },
  /** Any server speaking Chat Completions (vLLM, LM Studio, llama.cpp, LiteLLM, …): the base URL is required. */
  "openai-compatible": {
    keyEnv: ["OPENAI_COMPATIBLE_API_KEY"],
    keyRequired: false,
    baseUrlEnv: ["OPENAI_COMPATIBLE_BASE_URL"],
    baseUrlRequired: true,
    create: ({ modelId, baseURL, apiKey, headers, fetch }) =>
      createOpenAICompatible({
        name: "openai-compatible",
        baseURL: baseURL!,
        ...(apiKey ? { apiKey } : {}),
        headers,
        includeUsage: true,
        fetch,
      })(modelId),
  },
};

const ALIASES: Record<string, string> = { google: "gemini", compatible: "openai-compatible" };

export const PROVIDER_NAMES = Object.keys(PROVIDERS);

const isProvider = (name: string) => name in PROVIDERS || name in ALIASES;

export class ModelConfigError extends Error {
  override name = "ModelConfigError";
}

export interface ResolvedModel {
  provider: string;
  modelId: string;
  model: LanguageModel;
  /** The error the provider sent in the last response's stream, when its SDK package dropped it. */
  streamError?: () => string | undefined;
  /** The types of the events taken out of the last response's stream before its first (UnknownFirstEvents). */
  unknownFirstEvents?: () => string[];
  /** The model's refusal must be read from the raw chunks: its SDK package drops it. */
  refusalsInRaw?: boolean;
  /** The key the session's requests carry, if any: what the conversation file must never hold. */
  apiKey?: string;
  /**
   * `text` without the key's masked echo (OpenAI's 401 shows its first 8 and last 4 characters), as the credential
   * proxy takes it from what a CLI agent reads (../cli/masked-echo.ts): the log's redactor knows the key only whole.
   */
  withoutKeyEcho(text: string): string;
  /** Closes the session's connections to the provider (when the session closes). */
  close(): Promise<void>;
}

/**
 * Splits `provider:model` at the first colon (Ollama tags have colons of their own: `ollama:llama3.2:3b`).
 * Without a prefix, `provider.api` from the session's provider settings names the provider.
 */
export function parseModelSpec(
  spec: string | undefined,
  api?: string,
): { provider: string; modelId: string } {
  const example = 'e.g. "anthropic:claude-sonnet-4-5" or "ollama:llama3.2"';
  if (!spec)
    throw new ModelConfigError(`the api harness needs config.model as "provider:model" (${example})`);
  const colon = spec.indexOf(":");
  let named = colon > 0 ? spec.slice(0, colon) : api;
  let modelId = colon > 0 ? spec.slice(colon + 1) : spec;
  // With the provider given apart (nui's `harness.provider`), a colon may belong to the model: "llama3.2:3b".
  if (api && colon > 0 && !isProvider(named!)) {
    named = api;
    modelId = spec;
  }
  if (!named) {
    throw new ModelConfigError(
      `model "${spec}" names no provider: write it as "provider:model" (${example}); providers: ${PROVIDER_NAMES.join(", ")}`,
    );
  }
  const provider = ALIASES[named] ?? named;
  if (!PROVIDERS[provider]) {
    throw new ModelConfigError(
      `unknown provider "${named}" in model "${spec}"; providers: ${PROVIDER_NAMES.join(", ")}`,
    );
  }
  if (!modelId) throw new ModelConfigError(`model "${spec}" names no model after "${named}:"`);
  if (PROVIDERS[provider].modelInPath && !PATH_MODEL.test(modelId)) {
    throw new ModelConfigError(
      `model "${spec}": a ${provider} model id goes into the request's URL, so it may hold only letters, digits, ".", "_" and "-" (one "/" after a collection such as "tunedModels/"), e.g. "${provider}:gemini-2.5-flash"`,
    );
  }
  return { provider, modelId };
}

/**
 * A model id that stays one or two segments of the URL path. Anything else ("..", "?", "#", "%2e") would let
 * whoever names the model send the provider's key to another path on the provider's host, and read the answer.
 */
const PATH_MODEL = /^(?:[A-Za-z0-9][\w.-]*\/)?[A-Za-z0-9][\w.-]*$/;

/**
 * The model for `spec`. `env` is given only for a session that names no provider, on a host that lets such a
 * session use its own variables; otherwise the key and base URL are the provider's (`credentials`) or none.
 */
export function resolveModel(
  spec: string | undefined,
  credentials: ProviderCredentials,
  env: NodeJS.ProcessEnv | undefined,
  headers: Record<string, string> = {},
): ResolvedModel {
  const { provider, modelId } = parseModelSpec(spec, credentials.api);
  const kind = PROVIDERS[provider]!;
  if (!env) checkDestination(spec!, provider, credentials);
  const apiKey = credentials.api_key ?? (env ? firstSet(env, kind.keyEnv) : undefined);
  if (kind.keyRequired && !apiKey) throw new ModelConfigError(missingKey(provider, kind, env));
  const rawBase = credentials.base_url ?? (env ? firstSet(env, kind.baseUrlEnv) : undefined);
  if (kind.baseUrlRequired && !rawBase) {
    const variables = env ? ` (or ${kind.baseUrlEnv.join(" or ")})` : "";
    throw new ModelConfigError(
      `the ${provider} provider needs a base URL: set provider.base_url in brain.config.json${variables}`,
    );
  }
  const baseURL = rawBase ? (kind.normalizeBaseUrl ?? trimSlash)(rawBase) : kind.defaultBaseUrl;
  const errors = kind.dropsStreamErrors ? new StreamErrorLines() : undefined;
  const firstEvents = kind.failsOnUnknownFirstEvent ? new UnknownFirstEvents() : undefined;
  const echo = apiKey ? new MaskedEcho("api_key", apiKey) : undefined;
  // The session's own connections, with none of fetch's default 300 s header and body timeouts: idle_timeout_ms
  // says how long a provider may be quiet (a local model loading, a long think), and on fetch's shared pool a
  // session given more than 300 s was cut at 300 s with a bare "fetch failed" or "terminated".
  const pool = new Agent({ bodyTimeout: 0, headersTimeout: 0 });
  const pooled: typeof globalThis.fetch = (input, init) =>
    globalThis.fetch(input, { ...init, dispatcher: pool } as RequestInit);
  const fetch = withBoundedAnswers(withoutRedirects(provider, pooled));
  const model = kind.create({
    modelId,
    ...(baseURL ? { baseURL } : {}),
    ...(apiKey ? { apiKey } : {}),
    headers,
    fetch: errors ? errors.wrap(fetch) : firstEvents ? firstEvents.wrap(fetch) : fetch,
  });
  return {
    provider,
    modelId,
    model,
    ...(errors ? { streamError: () => errors.last() } : {}),
    ...(firstEvents ? { unknownFirstEvents: () => firstEvents.take() } : {}),
    ...(kind.dropsRefusals ? { refusalsInRaw: true } : {}),
    ...(apiKey ? { apiKey } : {}),
    withoutKeyEcho: (text) => echo?.redact(text) ?? text,
    close: () => pool.destroy().catch(() => {}),
  };
}

const vendorOf = (provider: string) => PROVIDERS[provider]?.vendor ?? provider;

/**
 * The model's prefix may choose the wire, never where the provider's key goes: a prefix of another vendor than
 * the provider's `api` is refused (it would send, say, the Anthropic key to OpenAI), and so is any prefix when a
 * provider with a key says neither its `api` nor its `base_url` (the prefix alone would pick the host).
 */
function checkDestination(spec: string, provider: string, credentials: ProviderCredentials): void {
  const { api, api_key, base_url } = credentials;
  if (api !== undefined) {
    const own = ALIASES[api] ?? api;
    if (!PROVIDERS[own]) {
      throw new ModelConfigError(
        `the provider's api "${api}" is not one the api harness speaks; use one of ${PROVIDER_NAMES.join(", ")}`,
      );
    }
    if (vendorOf(own) === vendorOf(provider)) return;
    throw new ModelConfigError(
      `model "${spec}" asks for ${provider}, but the session's provider speaks "${api}": its key and base URL go only to its own API; write the model as "${api}:<model>" (or without a prefix), or choose a provider whose api is ${provider}`,
    );
  }
  if (api_key && !base_url) {
    throw new ModelConfigError(
      `the session's provider gives a key but no "api" or "base_url", so model "${spec}" alone would choose where the key is sent; the operator must set the provider's api (e.g. "${provider}") or base_url`,
    );
  }
}

function missingKey(provider: string, kind: ProviderKind, env: NodeJS.ProcessEnv | undefined): string {
  if (!env) {
    return `no API key for ${provider}: this session's key can come only from its provider; use a provider whose api_key_env names the variable that holds the key`;
  }
  const [main, ...others] = kind.keyEnv;
  const alternatives = others.length ? ` (or ${others.join(" or ")})` : "";
  return `no API key for ${provider}: set ${main}${alternatives}, or name the variable that holds it in provider.api_key_env`;
}

function firstSet(env: NodeJS.ProcessEnv, names: string[]): string | undefined {
  for (const name of names) {
    const value = env[name];
    if (value) return value;
  }
  return undefined;
}
