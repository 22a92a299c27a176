// The opencode config for one session (OPENCODE_CONFIG): Brain's endpoint as provider "brain" (without one,
// opencode's own provider of the key's vendor pointed at Brain's credential proxy), no sharing or updates, and every permission opencode can ask for set to "ask", so each one comes to Brain's policy. The key
// stays out of the file: opencode substitutes `{env:…}` from its environment.
//
// opencode substitutes `{env:NAME}` and `{file:path}` anywhere in the config's raw text before it parses the
// JSON, so a client's model such as `{file:/etc/shadow}` would read a host file into the config (and back out
// in opencode's "model not found" message). Every such opening brace in the text is written as the JSON escape
// `\u007b`: opencode's substitution does not see it, its JSON parser reads it back as `{`, so opencode gets
// the client's text exactly. Brain's own key reference is the one left to substitute.
import { randomUUID } from "node:crypto";
import type { ProviderCredentials, SessionConfig } from "../../protocol/runner.js";
import type { StdioServerSpec } from "../../tools/endpoint/index.js";
import { VENDOR_PROVIDER, vendorKeyEnvironment, type WireApi } from "../cli/provider-api.js";
import type { CliProvider } from "../cli/services.js";

export const PROVIDER = "brain";
export const KEY_VARIABLE = "BRAIN_OPENCODE_API_KEY";

/** opencode speaks all three wires; Chat Completions unless told otherwise. */
export const OPENCODE_WIRES = { speaks: ["chat", "responses", "messages"], openai: "chat" } as const;

/** Brain's wire → the AI SDK package opencode loads (all bundled in the binary). */
const PACKAGES: Record<WireApi, string> = {
  chat: "@ai-sdk/openai-compatible",
  responses: "@ai-sdk/openai",
  messages: "@ai-sdk/anthropic",
};

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

/** The AI SDK's own base URL of each wire's vendor has /v1 in it, where the proxy's target (Anthropic's) may not. */
const VENDOR_PATH: Record<WireApi, string> = { chat: "", responses: "", messages: "/v1" };

/**
 * `wire` is the one to the provider's endpoint, when there is one; `given` the provider as opencode is to reach
 * it (Brain's credential proxy, when there is one), and `keyWire` the wire its key is for.
 */
export function opencodeConfig(
  config: SessionConfig,
  provider: ProviderCredentials,
  wire: WireApi | undefined,
  given: CliProvider & { keyWire?: WireApi | undefined },
  bound?: string,
): string {
  const model = modelRef(config, provider);
  // Stands for Brain's `{env:…}` until the client's text is escaped; random, so no client string can be it.
  const keyMarker = `brain-key-${randomUUID()}`;
  const out: Record<string, unknown> = {
    autoupdate: false,
    share: "disabled",
    // Bound: every tool denied (opencode then does not offer it) but the endpoint's, `<server>_<tool>`.
    permission: bound
      ? { "*": "deny", [`${bound}_*`]: "allow" }
      : { edit: "ask", bash: "ask", webfetch: "ask" },
  };
  if (model) {
    out.model = `${model.providerID}/${model.modelID}`;
    out.small_model = out.model;
  }
  if (provider.base_url && wire && config.model) {
    out.provider = {
      [PROVIDER]: {
        npm: PACKAGES[wire],
        name: "Brain provider",
        options: { baseURL: given.base_url, apiKey: keyMarker },
        models: {
          [config.model]: { name: config.model, tool_call: true, limit: { context: 128000, output: 16384 } },
        },
      },
    };
  } else if (given.proxy && given.keyWire) {
    // Its models all kept; the key (the proxy's token) stays in the vendor's own variable.
    const baseURL = `${given.proxy}${VENDOR_PATH[given.keyWire]}`;
    out.provider = { [VENDOR_PROVIDER[given.keyWire]]: { options: { baseURL } } };
  }
  const text = JSON.stringify(out, null, 2).replace(/\{(?=(?:env|file):)/gi, "\\u007b");
  return `${text.replace(`"${keyMarker}"`, `"{env:${KEY_VARIABLE}}"`)}\n`;
}

/** Where the key goes: our variable for a Brain endpoint, the providers' usual ones otherwise. */
export function keyEnvironment(
  family: Parameters<typeof vendorKeyEnvironment>[0],
  provider: ProviderCredentials,
): Record<string, string> {
  if (!provider.api_key) return {};
  if (provider.base_url) return { [KEY_VARIABLE]: provider.api_key };
  return vendorKeyEnvironment(family, provider, OPENCODE_WIRES);
}

/**
 * Bound mode's endpoint as an opencode MCP server, for OPENCODE_CONFIG_CONTENT: it names the secret, so it is
 * handed over in the environment rather than written into the native dir.
 */
export function boundConfigContent(server: StdioServerSpec): string {
  const { name, command, args, env } = server;
  return JSON.stringify({
    mcp: { [name]: { type: "local", command: [command, ...args], environment: env } },
  });
}
