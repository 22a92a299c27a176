// Where a CLI's provider is when it is Brain's credential proxy (./credential-proxy.ts), for a launcher that isolates
// the CLI (the tests' loopback-only namespace relays the proxy's port). A module of its own: the presets and
// descriptors that name it are loaded at start-up, and ./services.ts brings the tool endpoint (MCP) with it.

export const PROXY_VARIABLE = "BRAIN_PROVIDER_PROXY";

/** PROXY_VARIABLE with the proxy's URL, for a CLI's environment; nothing when it reaches its provider directly. */
export const proxyVariable = (provider: { proxy?: string }): Record<string, string> =>
  provider.proxy ? { [PROXY_VARIABLE]: provider.proxy } : {};
