// Whether a CLI reaches its provider through Brain's credential proxy (./credential-proxy.ts) or talks to it itself:
// decided here once, for CliServices.provider and for a sandbox that must know, before its container starts,
// whether the container needs a way to the provider (it does not when the host's proxy reaches it instead).
import type { HarnessOptions } from "../../core/harness.js";

/**
 * Why a CLI opened with `options` will talk to its provider itself rather than through the credential proxy;
 * undefined when it goes through the proxy. `proxied`: the host's CliFactoryOptions.credentialProxy. The one rule
 * CliServices.provider follows, so a sandbox can tell before opening whether its container needs the provider.
 */
export function unproxiedReason(options: HarnessOptions, proxied: boolean): string | undefined {
  if (!options.provider.api_key) return "the provider has no api_key, so the CLI talks to it itself";
  if (!proxied)
    return "its credential_proxy setting is false, so the CLI holds the key and talks to the provider itself";
  if (options.container && !options.container.reach)
    return "this host cannot bridge the proxy into its container";
  return undefined;
}
