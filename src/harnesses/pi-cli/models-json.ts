// $PI_CODING_AGENT_DIR/models.json for one session: Brain's endpoint as pi provider "brain". The key is not in
// the file: pi resolves an `apiKey` that names an environment variable from that variable.
import { HarnessError } from "../../core/harness.js";
import type { ProviderCredentials } from "../../protocol/runner.js";

export const PROVIDER = "brain";
export const KEY_VARIABLE = "BRAIN_PI_API_KEY";

/** Brain's provider `api` → pi's. Chat Completions unless told otherwise: most compatible endpoints speak it. */
const PI_APIS: Record<string, string> = {
  openai: "openai-completions",
  "openai-chat": "openai-completions",
  "openai-completions": "openai-completions",
  chat: "openai-completions",
  "openai-responses": "openai-responses",
  responses: "openai-responses",
  anthropic: "anthropic-messages",
  "anthropic-messages": "anthropic-messages",
  messages: "anthropic-messages",
};

export function piApi(api: string | undefined): string {
  if (api === undefined) return "openai-completions";
  const mapped = PI_APIS[api];
  if (!mapped) {
    throw new HarnessError(
      "brain_error",
      `pi-cli: the provider's api "${api}" is not one pi speaks; use one of ${Object.keys(PI_APIS).join(", ")}`,
    );
  }
  return mapped;
}

export function modelsJson(provider: ProviderCredentials, model: string): string {
  const api = piApi(provider.api);
  // pi's Anthropic client adds /v1 itself; the OpenAI clients expect it in the base URL.
  const baseUrl =
    api === "anthropic-messages"
      ? provider.base_url!.replace(/\/+$/, "").replace(/\/v1$/, "")
      : provider.base_url;
  const models = [{ id: model, name: model, contextWindow: 128000, maxTokens: 16384 }];
  return `${JSON.stringify({ providers: { [PROVIDER]: { baseUrl, api, apiKey: KEY_VARIABLE, models } } }, null, 2)}\n`;
}
