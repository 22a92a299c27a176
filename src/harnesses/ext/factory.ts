// `ext:<extension>/<harness-id>`: a harness an installed nui extension contributes, over the transport its
// manifest names. stdio: Brain starts the host once per session (at its first run) and keeps it for every
// run. tcp: one host for all sessions, found through its connection file (started by Brain when the manifest
// gives a command), one connection per session. http: one host, nui's HTTP/SSE protocol (docs/protocol.md).
import { homedir } from "node:os";
import { join } from "node:path";
import type { Harness, HarnessFactory, HarnessOptions } from "../../core/harness.js";
import { HarnessError } from "../../core/harness.js";
import type { Secret } from "../../core/redact.js";
import { connectionId } from "../../protocol/nui/connection.js";
import { HARNESS_METHODS } from "../../protocol/nui/jsonrpc.js";
import { HttpAgentClient } from "../http/client.js";
import { HttpHarness } from "../http/http-harness.js";
import { NUI_AGENT_SIDE } from "../nui/agent-side.js";
import type { NuiApiServer } from "../nui/api-server.js";
import { HitlDesk } from "../nui/hitl-desk.js";
import { ResumeState } from "../nui/resume-state.js";
import { type NuiSessionOptions, nuiSessionOptions } from "../nui/session-options.js";
import type { Spawner } from "../process/spawner.js";
import type { ExtensionHarness, InstalledExtension, ResolvedRuntime } from "./extensions.js";
import { hostEnvironment } from "./host-env.js";
import { type HostCommand, hostSecrets } from "./host-process.js";
import { RpcHarness } from "./rpc-harness.js";
import { type HostAddress, SharedHost } from "./shared-host.js";
import { startStdioHost } from "./stdio-transport.js";
import { dialTcpHost } from "./tcp-transport.js";
import { DEFAULT_TIMEOUTS, type Timeouts } from "./transport.js";

export interface NuiHostSettings {
  /** The loopback server behind NUI_API_URL (HITL requests of unchanged nui extensions). */
  api: NuiApiServer;
  /** Brain's Python SDK, on the hosts' PYTHONPATH. */
  pythonSdkDir: string;
  /** HOME for hosts; nui's SDKs write ~/.nui/connections under it. Default: the user's home. */
  home?: string;
  /** Where Brain looks first for connection files (and tells hosts, as NUI_CONNECTIONS_DIR). Default ~/.nui/connections. */
  connectionsDir?: string;
  timeouts?: Partial<Timeouts>;
  /** Where hosts are started (see Spawner); the factory holds it until closed. None: forked from Brain. */
  spawner?: Spawner;
}

export class ExtensionHarnessFactory implements HarnessFactory {
  readonly name: string;
  readonly supportsSteering = false;
  private readonly timeouts: Timeouts;
  private readonly runtime: ResolvedRuntime;
  private readonly home: string;
  private readonly connectionsDir: string;
  private readonly connectionId: string;
  private readonly shared: SharedHost | undefined;
  private sharedLease: { url: string; release: () => Promise<void> } | undefined;
  /** What the shared host Brain started last was given as secrets: every session of it is told them. */
  private sharedSecrets: Secret[] = [];
  /** Tells an open session secrets (HarnessOptions.secret), for the sessions of a shared host started later. */
  private readonly sessions = new Set<(secrets: Secret[]) => void>();
  private readonly releaseSpawner: (() => void) | undefined;

  constructor(
    readonly extension: InstalledExtension,
    readonly harness: ExtensionHarness,
    private readonly settings: NuiHostSettings,
  ) {
    if (!extension.runtime) throw new Error(`${harness.ref}: the extension declares no harness runtime`);
    this.name = harness.ref;
    this.runtime = extension.runtime;
    this.timeouts = { ...DEFAULT_TIMEOUTS, ...settings.timeouts };
    this.home = settings.home ?? homedir();
    this.connectionsDir = settings.connectionsDir ?? join(this.home, ".nui", "connections");
    this.connectionId = connectionId(harness.ref);
    this.releaseSpawner = settings.spawner?.use();
    if (this.runtime.transport !== "stdio") {
      const fixed =
        this.runtime.transport === "http" && this.runtime.port
          ? { host: this.runtime.host ?? "127.0.0.1", port: this.runtime.port }
          : undefined;
      this.shared = new SharedHost({
        ref: harness.ref,
        connectionId: this.connectionId,
        connectionDirs: [this.connectionsDir, join(this.home, ".nui", "connections")],
        ...(fixed ? { fixed } : {}),
        ...(this.runtime.command ? { command: () => this.sharedCommand() } : {}),
        ...(settings.spawner ? { spawner: settings.spawner } : {}),
        openMs: this.timeouts.openMs,
      });
    }
  }

  get transport(): ResolvedRuntime["transport"] {
    return this.runtime.transport;
  }

  agentSide(): string {
    return NUI_AGENT_SIDE;
  }

  async open(options: HarnessOptions): Promise<Harness> {
    const session = nuiSessionOptions(options.config.options, this.name);
    const resume = await ResumeState.load(options.dir);
    const lease = await this.settings.api.retain({ sessionId: options.sessionId });
    let harness: RpcHarness | HttpHarness | undefined;
    const desk = new HitlDesk(options.sessionId, options, (runId) => harness?.runFor(runId));
    const removeDesk = this.settings.api.addDesk(desk, this.name);
    // What a host is given as a secret (its NUI_API_URL token) it may write in any event, which the log keeps.
    const tell = (secrets: Secret[]) => {
      for (const secret of secrets) options.secret?.(secret);
    };
    tell(this.sharedSecrets);
    this.sessions.add(tell);
    const release = async () => {
      this.sessions.delete(tell);
      removeDesk();
      await lease.release();
    };
    try {
      harness = await this.harnessFor(options, session, resume, desk, lease.url, release, tell);
      return harness;
    } catch (err) {
      await release();
      throw err;
    }
  }

  /** Stops the shared TCP or HTTP host if Brain started it. */
  async close(): Promise<void> {
    try {
      await this.stopShared();
    } finally {
      this.releaseSpawner?.();
    }
  }

  private async stopShared(): Promise<void> {
    if (!this.shared) return;
    const name = this.name;
    const { shutdownMs } = this.timeouts;
    await this.shared.stop(async (address) => {
      if (this.runtime.transport === "http") {
        await httpClient(address, name).shutdown(shutdownMs);
        return;
      }
      const noop = { onNotification() {}, onWarning() {}, onFatal() {} };
      const transport = await dialTcpHost(address, name, { ...this.timeouts, openMs: shutdownMs }, noop);
      await transport.peer.request(HARNESS_METHODS.shutdown, {}, shutdownMs).catch(() => {});
      await transport.close();
    }, shutdownMs);
    await this.sharedLease?.release();
    this.sharedLease = undefined;
  }

  private async harnessFor(
    options: HarnessOptions,
    session: NuiSessionOptions,
    resume: ResumeState,
    desk: HitlDesk,
    apiUrl: string,
    release: () => Promise<void>,
    tell: (secrets: Secret[]) => void,
  ): Promise<RpcHarness | HttpHarness> {
    const base = { name: this.name, options, session, resume, timeouts: this.timeouts, release };
    switch (this.runtime.transport) {
      case "stdio":
        return new RpcHarness({
          ...base,
          harnessId: this.harness.id,
          desk,
          connect: (runId, events, closed) => {
            const command = this.command({
              apiUrl,
              sessionId: options.sessionId,
              runId,
              sessionEnv: session.env,
            });
            tell(hostSecrets(command.env));
            return startStdioHost(command, this.timeouts, events, this.settings.spawner, closed);
          },
        });
      case "tcp":
        return new RpcHarness({
          ...base,
          harnessId: this.harness.id,
          desk,
          connect: async (_runId, events) => {
            const host = this.sharedHost();
            const address = await host.ensure();
            return dialTcpHost(address, this.name, this.timeouts, events, host.endOfCurrent());
          },
        });
      case "http": {
        const host = this.sharedHost();
        const address = await host.ensure();
        const end = host.endOfCurrent();
        const client = httpClient(address, this.name, () => end(this.timeouts.shutdownMs));
        await client.info(this.timeouts.openMs).catch(async (err) => {
          await client.close();
          throw err;
        });
        return new HttpHarness({ ...base, client, desk });
      }
    }
  }

  private sharedHost(): SharedHost {
    if (!this.shared)
      throw new HarnessError("brain_error", `${this.name}: no shared host for a stdio harness`);
    return this.shared;
  }

  /**
   * A shared host's command: no session of its own, so no NUI_SESSION_ID or NUI_RUN_ID. Its NUI_API_URL reaches
   * the requests of this harness's sessions only: the server also serves other extensions' sessions.
   */
  private async sharedCommand(): Promise<HostCommand> {
    this.sharedLease ??= await this.settings.api.retain({ harness: this.name });
    const command = this.command({ apiUrl: this.sharedLease.url });
    this.sharedSecrets = hostSecrets(command.env);
    for (const tell of this.sessions) tell(this.sharedSecrets);
    return command;
  }

  private command(extra: {
    apiUrl?: string;
    sessionId?: string;
    runId?: string;
    sessionEnv?: Record<string, string>;
  }): HostCommand {
    const words = this.runtime.command;
    if (!words?.length)
      throw new HarnessError(
        "brain_error",
        `${this.name}: the manifest gives no runtime.command to start its host`,
      );
    const [command, ...args] = words;
    return {
      name: this.name,
      command: command!,
      args,
      cwd: this.runtime.cwd,
      env: hostEnvironment({
        extensionDir: this.extension.dir,
        extensionName: this.extension.name,
        harnessId: this.harness.id,
        connectionId: this.connectionId,
        home: this.home,
        connectionsDir: this.connectionsDir,
        pythonSdkDir: this.settings.pythonSdkDir,
        runtimeEnv: this.runtime.env,
        ...extra,
      }),
    };
  }
}

/** A client of an HTTP host, with the token its connection file names (which it then requires). */
/** `agentEnd`: how the host ended, for a run stream that broke (see SharedHost.endOfCurrent). */
function httpClient(
  address: HostAddress,
  name: string,
  agentEnd?: () => Promise<string | undefined>,
): HttpAgentClient {
  const url = `http://${address.host}:${address.port}`;
  return new HttpAgentClient(url, name, {
    ...(address.token !== undefined ? { token: address.token } : {}),
    ...(agentEnd ? { agentEnd } : {}),
  });
}
