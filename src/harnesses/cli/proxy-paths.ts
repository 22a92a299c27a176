// What Brain's credential proxy (./credential-proxy.ts) puts the provider's key on: the model endpoints the CLIs
// call, by method and path, and nothing else. With the key the proxy holds, a provider answers far more than model
// requests: uploaded files, fine-tuning jobs, batches, vector stores, an organisation's admin and usage endpoints.
// An agent, or a prompt-injected tool it runs, holds the proxy's URL and token and could call all of them with the
// operator's key; the proxy refuses every request not listed here instead.
//
// The paths are those the CLIs were seen to call (research/cli-wire-formats.md, acp-agents.md, cli-isolation.md:
// Claude Code's `HEAD /` and `POST /v1/messages?beta=true`, claude-code-acp's count_tokens, Codex's and pi's
// `/responses`, opencode's and pi's `/chat/completions`, gemini-cli's `:streamGenerateContent`), plus the token
// counting and model listing of the same APIs, which read nothing of the tenant's but the models.
import type { ProxyWire } from "./credential-proxy.js";

interface ProxyRoute {
  methods: readonly string[];
  /** The whole path after the base URL, without its query. */
  path: RegExp;
}

/**
 * A model's id as one path segment. It starts with a letter or digit, so it is never `.` or `..`, and holds no
 * `%`, so no encoded `/` or dot segment reaches a provider that decodes before routing.
 */
const MODEL = "[A-Za-z0-9][A-Za-z0-9._:-]*";

/** Anthropic Messages; the base URL is the host's, without /v1 (anthropicBaseUrl). */
const ANTHROPIC: readonly ProxyRoute[] = [
  // Claude Code's reachability check of its base URL before its first request.
  { methods: ["HEAD"], path: /^\/?$/ },
  { methods: ["POST"], path: /^\/v1\/messages$/ },
  { methods: ["POST"], path: /^\/v1\/messages\/count_tokens$/ },
  { methods: ["GET"], path: new RegExp(`^/v1/models(?:/${MODEL})?$`) },
];

/**
 * OpenAI's, for both of its wires: the base URL has /v1 in it. Both, since a CLI given the vendor's own provider
 * picks the API by the model (pi's and the AI SDK's OpenAI models speak Responses even where the session's wire
 * says Chat Completions); the key is the same, and it reaches only model requests either way.
 */
const OPENAI: readonly ProxyRoute[] = [
  { methods: ["POST"], path: /^\/chat\/completions$/ },
  { methods: ["POST"], path: /^\/responses$/ },
  // Token counting, and Codex's compaction of a long conversation into a shorter input.
  { methods: ["POST"], path: /^\/responses\/(?:input_tokens|compact)$/ },
  { methods: ["GET"], path: new RegExp(`^/models(?:/${MODEL})?$`) },
];

/** The Gemini API; the base URL is the host's, the version is in the path. */
const GEMINI_MODEL = "[A-Za-z0-9][A-Za-z0-9._-]*";
const GEMINI: readonly ProxyRoute[] = [
  {
    methods: ["POST"],
    path: new RegExp(
      `^/(?:v1|v1beta|v1alpha)/models/${GEMINI_MODEL}:(?:generateContent|streamGenerateContent|countTokens)$`,
    ),
  },
  { methods: ["GET"], path: new RegExp(`^/(?:v1|v1beta|v1alpha)/models(?:/${GEMINI_MODEL})?$`) },
];

/** The API each wire's routes are of, for a refusal. */
const TITLE: Record<ProxyWire, string> = {
  messages: "Anthropic Messages",
  chat: "OpenAI",
  responses: "OpenAI",
  gemini: "Gemini",
};

const ROUTES: Record<ProxyWire, readonly ProxyRoute[]> = {
  messages: ANTHROPIC,
  chat: OPENAI,
  responses: OPENAI,
  gemini: GEMINI,
};

/**
 * Why the proxy refuses `method` on `rest` (the path after the base URL, with its query) for `wire`, or
 * undefined when it is one of that wire's model endpoints.
 */
export function refusedRoute(wire: ProxyWire, method: string, rest: string): string | undefined {
  const path = rest.split("?", 1)[0]!;
  const routes = ROUTES[wire].filter((route) => route.path.test(path));
  // The query is left out: it is the agent's, and may hold a key.
  const named = JSON.stringify(path.length > 200 ? `${path.slice(0, 200)}…` : path);
  if (routes.length === 0) {
    return `${method} ${named} is not one of the ${TITLE[wire]} API's model endpoints, the only paths the credential proxy puts the provider's key on`;
  }
  if (routes.some((route) => route.methods.includes(method))) return undefined;
  const allowed = [...new Set(routes.flatMap((route) => route.methods))].join(", ");
  return `${method} ${named}: the credential proxy puts the provider's key on this path only for ${allowed}`;
}
