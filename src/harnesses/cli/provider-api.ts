// Brain's provider `api` names, read once for every CLI family: which wire protocol each name means, and the
// refusal when a family cannot speak it. A bare "openai" names OpenAI without choosing a wire, so each family
// reads it as its own OpenAI default (Chat Completions for most compatible endpoints, Responses for Codex).
import { HarnessError, type HarnessOptions } from "../../core/harness.js";
import type { CliFamilyDescriptor } from "./family.js";

export type WireApi = "chat" | "responses" | "messages";

/** In the order a refusal lists them. */
const API_NAMES: Record<string, WireApi | "openai"> = {
  openai: "openai",
  "openai-chat": "chat",
  "openai-completions": "chat",
  chat: "chat",
  "openai-responses": "responses",
  responses: "responses",
  anthropic: "messages",
  "anthropic-messages": "messages",
  messages: "messages",
};

const WIRES: Record<WireApi, { title: string; name: string; endpoint: string }> = {
  chat: { title: "OpenAI Chat Completions", name: "openai-chat", endpoint: "a Chat Completions-compatible" },
  responses: { title: "OpenAI Responses", name: "openai-responses", endpoint: "a Responses-compatible" },
  messages: { title: "Anthropic Messages", name: "anthropic", endpoint: "an Anthropic-compatible" },
};

export interface WireRules {
  /** The wires the family speaks; the first is what an unset `api` means. */
  speaks: readonly WireApi[];
  /** What a bare "openai" means to this family. */
  openai: WireApi;
}

/** The wire the provider's `api` asks for, or a brain_error saying what this family speaks instead. */
export function providerWire(
  family: Pick<CliFamilyDescriptor, "harness" | "program" | "title">,
  api: string | undefined,
  rules: WireRules,
): WireApi {
  if (api === undefined) return rules.speaks[0]!;
  const named = API_NAMES[api];
  const wire = named === "openai" ? rules.openai : named;
  if (wire && rules.speaks.includes(wire)) return wire;
  if (rules.speaks.length === 1) {
    const only = WIRES[rules.speaks[0]!];
    throw new HarnessError(
      "brain_error",
      `${family.harness}: ${family.title} speaks only the ${only.title} API, but the provider's api is "${api}"; ` +
        `use "${only.name}" (or leave it out) with ${only.endpoint} base_url`,
    );
  }
  const names = Object.keys(API_NAMES).filter((name) => {
    const meant = API_NAMES[name] === "openai" ? rules.openai : API_NAMES[name];
    return rules.speaks.includes(meant as WireApi);
  });
  throw new HarnessError(
    "brain_error",
    `${family.harness}: the provider's api "${api}" is not one ${family.program} speaks; use one of ${names.join(", ")}`,
  );
}

/**
 * A key that says neither its vendor (`api`) nor its endpoint (`base_url`) goes wherever the family sends it:
 * the vendor of the family a client chose (Claude Code's key variable with an OpenAI key), or of the model a
 * client named (pi, opencode). Refused before anything starts; `chooser` says what would choose.
 */
export function refuseKeyWithoutVendor(
  family: Pick<CliFamilyDescriptor, "harness" | "program">,
  provider: Pick<HarnessOptions["provider"], "api_key" | "api" | "base_url">,
  chooser = `the choice of ${family.harness} as the session's harness`,
): void {
  if (!provider.api_key || provider.api !== undefined || provider.base_url) return;
  throw new HarnessError(
    "brain_error",
    `${family.harness}: the session's provider gives a key but neither "api" nor "base_url", so ${chooser} ` +
      `would decide which vendor gets that key; the operator must set the provider's api (the vendor the key ` +
      `is for, e.g. "anthropic" or "openai") or its base_url`,
  );
}

/** providerWire for a family that speaks to one vendor, refusing a key that names no vendor (see above). */
export function ownVendorWire(
  family: Pick<CliFamilyDescriptor, "harness" | "program" | "title">,
  provider: Pick<HarnessOptions["provider"], "api_key" | "api" | "base_url">,
  rules: WireRules,
): WireApi {
  refuseKeyWithoutVendor(family, provider);
  return providerWire(family, provider.api, rules);
}

/**
 * For a family that names its endpoint's model itself (pi, opencode): the wire to the provider's base_url, or
 * undefined when there is none; a base_url without the session's model is refused, since only it can say
 * which model that endpoint serves. Without a base_url a key must say its vendor (see vendorKeyEnvironment).
 */
export function endpointWire(
  family: Pick<CliFamilyDescriptor, "harness" | "program" | "title">,
  options: Pick<HarnessOptions, "provider" | "config">,
  rules: WireRules,
): WireApi | undefined {
  const { provider, config } = options;
  if (!provider.base_url) {
    vendorKeyEnvironment(family, provider, rules); // refused before anything starts
    return undefined;
  }
  const wire = providerWire(family, provider.api, rules); // before anything starts
  if (!config.model) {
    throw new HarnessError(
      "brain_error",
      `${family.harness}: with a provider base_url, ${family.program} needs the model's id at that endpoint: set the session's model (--model)`,
    );
  }
  return wire;
}

/** Anthropic's SDKs take the host without /v1 and add it themselves. */
export function anthropicBaseUrl(url: string): string {
  return url.replace(/\/+$/, "").replace(/\/v1$/, "");
}

/** The variable each wire's vendor SDK reads its key from. */
const VENDOR_KEY: Record<WireApi, string> = {
  chat: "OPENAI_API_KEY",
  responses: "OPENAI_API_KEY",
  messages: "ANTHROPIC_API_KEY",
};

/**
 * The key of a provider without a base_url, for a CLI that picks the vendor from the model's name (pi,
 * opencode): only in the variable of the vendor the provider's `api` names, since a client's model of another
 * vendor would otherwise have the CLI send this key there. A provider with a key that names no `api` is
 * refused: whichever vendor's variable held its key, a client's model would choose whether the CLI sends it to
 * that vendor (the api harness refuses such a provider for the same reason).
 */
export function vendorKeyEnvironment(
  family: Pick<CliFamilyDescriptor, "harness" | "program" | "title">,
  provider: Pick<HarnessOptions["provider"], "api_key" | "api" | "base_url">,
  rules: WireRules,
): Record<string, string> {
  const key = provider.api_key;
  if (!key) return {};
  if (provider.api === undefined) {
    refuseKeyWithoutVendor(family, provider, "the model's name");
    return {}; // with a base_url the key goes to that endpoint, not here
  }
  return { [VENDOR_KEY[providerWire(family, provider.api, rules)]]: key };
}

/**
 * The wire a CLI that names its endpoint's model itself (pi, opencode) speaks with the provider's key: the
 * endpoint's, or without a base_url that of the vendor the provider's `api` names, the one vendor
 * vendorKeyEnvironment gives the key to; undefined when the key goes nowhere (or there is none).
 */
export function keyWire(
  family: Pick<CliFamilyDescriptor, "harness" | "program" | "title">,
  provider: Pick<HarnessOptions["provider"], "api_key" | "api">,
  rules: WireRules,
  endpoint: WireApi | undefined,
): WireApi | undefined {
  if (endpoint || !provider.api_key || provider.api === undefined) return endpoint;
  return providerWire(family, provider.api, rules);
}

/** pi's and opencode's id of their own provider for each wire's vendor, which a config can point elsewhere. */
export const VENDOR_PROVIDER: Record<WireApi, string> = {
  chat: "openai",
  responses: "openai",
  messages: "anthropic",
};
