// $PI_CODING_AGENT_DIR/models.json for one session: Brain's endpoint as pi provider "brain". The key is not in
// the file: pi resolves an `apiKey` that names an environment variable from that variable.

import type { ProviderCredentials } from "../../protocol/runner.js";
import { anthropicBaseUrl, type WireApi } from "../cli/provider-api.js";

export const PROVIDER = "brain";
export const KEY_VARIABLE = "BRAIN_PI_API_KEY";

/** pi speaks all three wires; Chat Completions unless told otherwise: most compatible endpoints speak it. */
export const PI_WIRES = { speaks: ["chat", "responses", "messages"], openai: "chat" } as const;

/** Brain's wire → pi's name for it. */
const PI_APIS: Record<WireApi, string> = {
  chat: "openai-completions",
  responses: "openai-responses",
  messages: "anthropic-messages",
};

export function modelsJson(provider: ProviderCredentials, model: string, wire: WireApi): string {
  const api = PI_APIS[wire];
  // pi's Anthropic client adds /v1 itself; the OpenAI clients expect it in the base URL.
  const baseUrl = wire === "messages" ? anthropicBaseUrl(provider.base_url!) : provider.base_url;
  const models = [{ id: model, name: model, contextWindow: 128000, maxTokens: 16384 }];
  return `${JSON.stringify({ providers: { [PROVIDER]: { baseUrl, api, apiKey: KEY_VARIABLE, models } } }, null, 2)}\n`;
}
