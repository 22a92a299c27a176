// `remote`: an HTTP/SSE agent someone else runs, at `config.options.url` (or host and port). Brain checks it
// answers GET /info when the session starts and never starts or stops it.
import type { Harness, HarnessFactory, HarnessOptions } from "../../core/harness.js";
import { NUI_AGENT_SIDE } from "../nui/agent-side.js";
import { nuiSessionOptions } from "../nui/session-options.js";
import { HttpAgentClient } from "./client.js";
import { remoteUrl } from "./connect-options.js";
import { HttpHarness, type HttpTimeouts } from "./http-harness.js";

export interface RemoteTimeouts extends HttpTimeouts {
  /** GET /info at open. */
  infoMs: number;
}

export const DEFAULT_REMOTE_TIMEOUTS: RemoteTimeouts = {
  infoMs: 5_000,
  interruptGraceMs: 5_000,
  shutdownMs: 3_000,
};

export class RemoteFactory implements HarnessFactory {
  readonly supportsSteering = false;
  private readonly timeouts: RemoteTimeouts;

  constructor(
    readonly name = "remote",
    timeouts: Partial<RemoteTimeouts> = {},
  ) {
    this.timeouts = { ...DEFAULT_REMOTE_TIMEOUTS, ...timeouts };
  }

  agentSide(): string {
    return NUI_AGENT_SIDE;
  }

  async open(options: HarnessOptions): Promise<Harness> {
    const url = remoteUrl(options.config.options, this.name);
    const session = nuiSessionOptions(options.config.options, this.name);
    const client = new HttpAgentClient(url, `${this.name} agent at ${url}`);
    await client.info(this.timeouts.infoMs).catch(async (err) => {
      await client.close();
      throw err;
    });
    return HttpHarness.open({ client, options, session, timeouts: this.timeouts, release: async () => {} });
  }
}
