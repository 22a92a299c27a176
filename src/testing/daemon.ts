// A daemon on a throwaway $BRAIN_HOME and a free loopback port, for tests and benchmarks: real HTTP, the echo
// runner, tokens for two tenants and an observer.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { echoRunnerPath } from "../cli/setup.js";
import { BrainClient, type ClientOptions } from "../client/client.js";
import { Brain, type SessionStore } from "../core/brain.js";
import type { HarnessFactory } from "../core/harness.js";
import { HarnessRegistry } from "../core/registry.js";
import { ProcessFactory } from "../harnesses/process/factory.js";
import type { SessionDefaults } from "../protocol/config.js";
import type { AgentCatalog } from "../server/agents.js";
import { newToken } from "../server/auth/tokens.js";
import { type Daemon, startDaemon } from "../server/daemon.js";
import type { CommandRouter } from "../server/routing.js";
import type { SseLimits } from "../server/sse/stream.js";
import { FsSessionStore, type LogHolder, type LogIO } from "../store/fs/index.js";
import { BuiltinTools } from "../tools/builtin.js";
import { ToolRouter } from "../tools/router.js";

export interface TestDaemon {
  daemon: Daemon;
  brain: Brain;
  home: string;
  url: string;
  /** Tokens: the default tenant's controller, another tenant's controller, a default-tenant observer. */
  tokens: { admin: string; other: string; observer: string };
  client(options?: Partial<ClientOptions>): BrainClient;
  /** Stops the daemon and the brain and removes the home. */
  cleanup(): Promise<void>;
}

export async function startTestDaemon(
  options: {
    auth?: boolean;
    sse?: Partial<SseLimits>;
    factories?: HarnessFactory[];
    defaults?: SessionDefaults;
    agents?: AgentCatalog;
    home?: string;
    /** The port and tokens of a daemon before this one on `home`: what a daemon restarted looks like to its clients. */
    port?: number;
    tokens?: TestDaemon["tokens"];
    /** Cluster mode's command routing (a recording stand-in replaces NATS where only this node's side is tested). */
    router?: CommandRouter;
    /** BrainOptions.openSessionsPerTenant. */
    openSessionsPerTenant?: number;
    /** BrainOptions.storedSessionsPerTenant. */
    storedSessionsPerTenant?: number;
    /** BrainOptions.logBytesPerSession. */
    logBytesPerSession?: number;
    /** BrainOptions.logBytesPerTenant. */
    logBytesPerTenant?: number;
    /** DaemonOptions.eventStreamsPerTenant. */
    eventStreamsPerTenant?: number;
    /** DaemonOptions.logReadsPerTenant. */
    logReadsPerTenant?: number;
    /** DaemonOptions.bodiesPerTenant. */
    bodiesPerTenant?: number;
    /** DaemonOptions.hitlWaitsPerTenant. */
    hitlWaitsPerTenant?: number;
    /** DaemonOptions.forwardsPerTenant. */
    forwardsPerTenant?: number;
    /** DaemonOptions.keyedWaitMs. */
    keyedWaitMs?: number;
    /** The log's file calls (a test that holds a write). */
    io?: LogIO;
    /** Another store than the embedded one on `home` (the cluster store, to test a daemon in cluster mode). */
    store?: SessionStore;
    /** DaemonOptions.onError: what `brain serve` logs of a 5xx. */
    onError?: (err: unknown) => void;
  } = {},
): Promise<TestDaemon> {
  const home = options.home ?? mkdtempSync(join(tmpdir(), "brain-daemon-"));
  const holder: LogHolder = { kind: "daemon" };
  const store = options.store ?? new FsSessionStore(home, options.io, holder);
  const echo = new ProcessFactory({ name: "echo", command: process.execPath, args: [echoRunnerPath()] });
  const tokens = options.tokens ?? { admin: newToken(), other: newToken(), observer: newToken() };
  const brain = new Brain({
    store,
    harnesses: new HarnessRegistry(options.factories ?? [echo]),
    tools: new ToolRouter([new BuiltinTools()]),
    // As `brain serve` does: no event, error or log line may hold a token.
    secrets: Object.values(tokens).map((value) => ({ name: "token", value })),
    ...(options.openSessionsPerTenant ? { openSessionsPerTenant: options.openSessionsPerTenant } : {}),
    ...(options.storedSessionsPerTenant ? { storedSessionsPerTenant: options.storedSessionsPerTenant } : {}),
    ...(options.logBytesPerSession ? { logBytesPerSession: options.logBytesPerSession } : {}),
    ...(options.logBytesPerTenant ? { logBytesPerTenant: options.logBytesPerTenant } : {}),
  });
  const daemon = await startDaemon({
    brain,
    home,
    port: options.port ?? 0,
    ...(options.auth === false
      ? {}
      : {
          tokens: [
            { token: tokens.admin, tenant: "default", role: "controller" as const, name: "admin" },
            { token: tokens.other, tenant: "acme", role: "controller" as const, name: "acme-ci" },
            { token: tokens.observer, tenant: "default", role: "observer" as const, name: "observer" },
          ],
        }),
    ...(options.sse ? { sse: options.sse } : {}),
    ...(options.defaults ? { defaults: options.defaults } : {}),
    ...(options.agents ? { agents: options.agents } : {}),
    ...(options.router ? { router: options.router } : {}),
    ...(options.eventStreamsPerTenant ? { eventStreamsPerTenant: options.eventStreamsPerTenant } : {}),
    ...(options.logReadsPerTenant ? { logReadsPerTenant: options.logReadsPerTenant } : {}),
    ...(options.bodiesPerTenant ? { bodiesPerTenant: options.bodiesPerTenant } : {}),
    ...(options.hitlWaitsPerTenant ? { hitlWaitsPerTenant: options.hitlWaitsPerTenant } : {}),
    ...(options.forwardsPerTenant ? { forwardsPerTenant: options.forwardsPerTenant } : {}),
    ...(options.onError ? { onError: options.onError } : {}),
    ...(options.keyedWaitMs ? { keyedWaitMs: options.keyedWaitMs } : {}),
  });
  holder.url = daemon.url;
  return {
    daemon,
    brain,
    home,
    url: daemon.url,
    tokens,
    client: (extra = {}) => new BrainClient({ url: daemon.url, token: tokens.admin, ...extra }),
    async cleanup() {
      await daemon.close();
      await brain.close();
      if (!options.home) rmSync(home, { recursive: true, force: true });
    },
  };
}
