// Which configured providers a network caller may name: all of them, or the ones its token lists.
import type { Brain } from "../core/brain.js";
import type { ProviderGrant } from "../core/session-input.js";
import type { ProviderList } from "../protocol/api.js";
import type { Principal } from "./auth/tokens.js";

/** The configured providers the caller may name (never their URLs, key variables or keys); `chosen` is the default. */
export function providerList(brain: Brain, chosen: unknown, caller: Principal): ProviderList {
  return {
    providers: allowedProviders(brain.providers.names(), caller).map((name) => {
      const api = brain.providers.settings(name).api;
      return { name, ...(api ? { api } : {}), ...(chosen === name ? { default: true } : {}) };
    }),
  };
}

/** The providers the caller may name in what it asks for. */
export function providerGrant(brain: Brain, caller: Principal): ProviderGrant {
  return {
    allowed: allowedProviders(brain.providers.names(), caller),
    restricted: caller.providers !== undefined,
    listedAt: "GET /v1/providers",
  };
}

function allowedProviders(configured: string[], caller: Principal): string[] {
  return caller.providers ? configured.filter((name) => caller.providers!.includes(name)) : configured;
}
