// What a CLI harness serves its program from Brain's process, each started at first use (opening stays passive)
// and closed with the harness: the session's tool endpoint (bound mode) and the provider's credential proxy.
import type { HarnessOptions } from "../../core/harness.js";
import { type RunningTurnRef, sessionToolEndpoint, type ToolEndpoint } from "../../tools/endpoint/index.js";
import { CredentialProxy, type ProxyTarget, type ProxyWire } from "./credential-proxy.js";
import { unproxiedReason } from "./proxy-route.js";

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
  /** The proxy's port bridged into the session's container, when the CLI runs in one. */
  private bridged: Promise<{ close(): Promise<void> }> | undefined;

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
   * the credential proxy's URL and token instead of the real ones (./credential-proxy.ts). In a container, whose
   * 127.0.0.1 is not this host's, the proxy's port is bridged to the container's 127.0.0.1 at the same port, so
   * the same URL holds there and that CLI does not hold the key either.
   */
  async provider(wire: ProxyWire, base_url: string | undefined): Promise<CliProvider> {
    const key = this.options.provider.api_key;
    const direct = { ...(base_url ? { base_url } : {}), ...(key ? { api_key: key } : {}) };
    // A container this host cannot bridge into has no way to the proxy: that CLI holds the key (README, security).
    if (!key || unproxiedReason(this.options, this.proxied) !== undefined) return direct;
    const target: ProxyTarget = { wire, api_key: key, ...(base_url ? { base_url } : {}) };
    this.proxy ??= CredentialProxy.start(target, (why) => this.refused(why));
    const proxy = await this.proxy;
    const reach = this.options.container?.reach;
    if (reach) {
      this.bridged ??= reach(proxy.port);
      await this.bridged;
      // The proxy is the CLI's only way to its provider: the provider's own port is no longer bridged in.
      await this.options.container?.proxied?.();
    }
    return { base_url: proxy.url, api_key: proxy.token, proxy: proxy.url };
  }

  /** A request the proxy refused is on the session's log, so its operator sees what the agent tried. */
  private refused(why: string): void {
    const turn = this.current();
    this.options.emit({
      type: "harness.warning",
      ...(turn ? { turn: turn.id } : {}),
      data: { message: `the credential proxy refused a request: ${why}` },
    });
  }

  /** The bridge is cut before the proxy closes: a container never reaches a port that another server took. */
  async close(): Promise<void> {
    const proxy = async () => {
      await (await this.bridged?.catch(() => undefined))?.close();
      await (await this.proxy?.catch(() => undefined))?.close();
    };
    await Promise.all([this.endpoint?.catch(() => undefined).then((endpoint) => endpoint?.close()), proxy()]);
  }
}
