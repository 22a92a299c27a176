// What a CLI harness serves its program from Brain's process, each started at first use (opening stays passive)
// and closed with the harness: the session's tool endpoint (bound mode) and the provider's credential proxy.
import type { HarnessOptions } from "../../core/harness.js";
import { type RunningTurnRef, sessionToolEndpoint, type ToolEndpoint } from "../../tools/endpoint/index.js";
import { CredentialProxy, type ProxyTarget } from "./credential-proxy.js";
import type { WireApi } from "./provider-api.js";

/** The variable that says where the CLI's provider is when it is Brain's proxy (for a launcher that isolates it). */
export const PROXY_VARIABLE = "BRAIN_PROVIDER_PROXY";

/** The provider as the CLI sees it: its base URL and key, the proxy's when there is one. */
export interface CliProvider {
  base_url?: string;
  api_key?: string;
  /** The proxy's URL, when the CLI reaches its provider through one. */
  proxy?: string;
}

export class CliServices {
  private endpoint: Promise<ToolEndpoint> | undefined;
  private proxy: Promise<CredentialProxy> | undefined;

  constructor(
    private readonly options: HarnessOptions,
    private readonly current: () => RunningTurnRef | undefined,
    /** False: the host's config has the CLI hold the key itself (CliFactoryOptions.credentialProxy). */
    private readonly proxied = true,
  ) {}

  toolEndpoint(): Promise<ToolEndpoint> {
    // In a container, the endpoint's socket and files go where it mounts them, and its proxy runs on its node.
    const inside = this.options.container;
    this.endpoint ??= sessionToolEndpoint(
      this.options,
      this.current,
      inside ? { node: inside.node, parent: inside.toolsDir, user: inside.user } : {},
    );
    return this.endpoint;
  }

  /**
   * The provider for the CLI speaking `wire`, `base_url` as its SDK joins paths to it. With a key, the CLI gets
   * the credential proxy's URL and token instead of the real ones (./credential-proxy.ts), unless it runs in a
   * container, whose 127.0.0.1 is not this host's: that CLI still holds the key (README, security).
   */
  async provider(wire: WireApi, base_url: string | undefined): Promise<CliProvider> {
    const key = this.options.provider.api_key;
    const direct = { ...(base_url ? { base_url } : {}), ...(key ? { api_key: key } : {}) };
    if (!key || !this.proxied || this.options.container) return direct;
    const target: ProxyTarget = { wire, api_key: key, ...(base_url ? { base_url } : {}) };
    this.proxy ??= CredentialProxy.start(target);
    const proxy = await this.proxy;
    return { base_url: proxy.url, api_key: proxy.token, proxy: proxy.url };
  }

  async close(): Promise<void> {
    await Promise.all([
      this.endpoint?.catch(() => undefined).then((endpoint) => endpoint?.close()),
      this.proxy?.catch(() => undefined).then((proxy) => proxy?.close()),
    ]);
  }
}
