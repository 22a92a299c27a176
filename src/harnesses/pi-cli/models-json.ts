// $PI_CODING_AGENT_DIR/models.json for one session: Brain's endpoint as pi provider "brain", or, without one,
// pi's own provider of the key's vendor pointed at Brain's credential proxy. The key is not in the file: pi
// resolves an `apiKey` that names an environment variable from that variable.

import { anthropicBaseUrl, VENDOR_PROVIDER, type WireApi } from "../cli/provider-api.js";

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

/** `base_url`: the endpoint as pi is to reach it (the credential proxy's URL, when there is one). */
export function modelsJson(base_url: string, model: string, wire: WireApi): string {
  const api = PI_APIS[wire];
  const baseUrl = piBaseUrl(base_url, wire);
  const models = [{ id: model, name: model, contextWindow: 128000, maxTokens: 16384 }];
  return `${JSON.stringify({ providers: { [PROVIDER]: { baseUrl, api, apiKey: KEY_VARIABLE, models } } }, null, 2)}\n`;
}

/** pi's Anthropic client adds /v1 itself; the OpenAI clients expect it in the base URL. */
export function piBaseUrl(base_url: string, wire: WireApi): string {
  return wire === "messages" ? anthropicBaseUrl(base_url) : base_url;
}

/**
 * Without an endpoint, pi picks the provider from the model's name: the key's vendor's own provider reaches it
 * through Brain's credential proxy (`proxy`, joined to as that vendor's own base URL), its models all kept.
 */
export function vendorModelsJson(proxy: string, wire: WireApi): string {
  return `${JSON.stringify({ providers: { [VENDOR_PROVIDER[wire]]: { baseUrl: proxy } } }, null, 2)}\n`;
}
