// The opencode config for one session (OPENCODE_CONFIG): Brain's endpoint as provider "brain", no sharing or
// updates, and every permission opencode can ask for set to "ask", so each one comes to Brain's policy. The key
// stays out of the file: opencode substitutes `{env:…}` from its environment.
import { HarnessError } from "../../core/harness.js";
import type { ProviderCredentials, SessionConfig } from "../../protocol/runner.js";

export const PROVIDER = "brain";
export const KEY_VARIABLE = "BRAIN_OPENCODE_API_KEY";

/** Brain's provider `api` → the AI SDK package opencode loads (all bundled in the binary). */
const PACKAGES: Record<string, string> = {
  openai: "@ai-sdk/openai-compatible",
  "openai-chat": "@ai-sdk/openai-compatible",
  "openai-completions": "@ai-sdk/openai-compatible",
  chat: "@ai-sdk/openai-compatible",
  "openai-responses": "@ai-sdk/openai",
  responses: "@ai-sdk/openai",
  anthropic: "@ai-sdk/anthropic",
  "anthropic-messages": "@ai-sdk/anthropic",
  messages: "@ai-sdk/anthropic",
};

export function providerPackage(api: string | undefined): string {
  if (api === undefined) return "@ai-sdk/openai-compatible";
  const found = PACKAGES[api];
  if (!found) {
    throw new HarnessError(
      "brain_error",
      `opencode: the provider's api "${api}" is not one opencode speaks; use one of ${Object.keys(PACKAGES).join(", ")}`,
    );
  }
  return found;
}

/** "brain/<model>" for a Brain endpoint, else the model as given (opencode's own "provider/model" form). */
export function modelRef(
  config: SessionConfig,
  provider: ProviderCredentials,
): { providerID: string; modelID: string } | undefined {
  if (!config.model) return undefined;
  if (provider.base_url) return { providerID: PROVIDER, modelID: config.model };
  const [providerID, ...rest] = config.model.split("/");
  return rest.length > 0 ? { providerID: providerID!, modelID: rest.join("/") } : undefined;
}

export function opencodeConfig(config: SessionConfig, provider: ProviderCredentials): string {
  const model = modelRef(config, provider);
  const out: Record<string, unknown> = {
    autoupdate: false,
    share: "disabled",
    permission: { edit: "ask", bash: "ask", webfetch: "ask" },
  };
  if (model) {
    out.model = `${model.providerID}/${model.modelID}`;
    out.small_model = out.model;
  }
  if (provider.base_url && config.model) {
    out.provider = {
      [PROVIDER]: {
        npm: providerPackage(provider.api),
        name: "Brain provider",
        options: { baseURL: provider.base_url, apiKey: `{env:${KEY_VARIABLE}}` },
        models: {
          [config.model]: { name: config.model, tool_call: true, limit: { context: 128000, output: 16384 } },
        },
      },
    };
  }
  return `${JSON.stringify(out, null, 2)}\n`;
}

/** Where the key goes: our variable for a Brain endpoint, the providers' usual ones otherwise. */
export function keyEnvironment(provider: ProviderCredentials): Record<string, string> {
  if (!provider.api_key) return {};
  if (provider.base_url) return { [KEY_VARIABLE]: provider.api_key };
  return { ANTHROPIC_API_KEY: provider.api_key, OPENAI_API_KEY: provider.api_key };
}
