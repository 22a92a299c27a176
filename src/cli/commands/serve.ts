// `brain serve`: the daemon (REST + SSE + web UI) on the embedded store, until SIGINT or SIGTERM.

import { inspect } from "node:util";
import type { RetentionPolicy } from "../../core/retention.js";
import {
  type BrainConfig,
  DEFAULT_EVENT_STREAMS_PER_TENANT,
  DEFAULT_LOG_BYTES_PER_SESSION,
  DEFAULT_LOG_BYTES_PER_TENANT,
  DEFAULT_OPEN_SESSIONS_PER_TENANT,
  DEFAULT_STORED_SESSIONS_PER_TENANT,
} from "../../protocol/config.js";
import { homeAgents } from "../../server/agents.js";
import { loadOrCreateTokens, tokensPath } from "../../server/auth/tokens.js";
import { DEFAULT_HOST, DEFAULT_PORT, startDaemon } from "../../server/daemon.js";
import type { LogHolder } from "../../store/fs/index.js";
import { parse, refuseExtra, str, UsageError, wholeNumber } from "../args.js";
import { leaseTtl, natsServers, openClusterStore, refuseOpenCluster, shownServers } from "../cluster.js";
import { loadConfig } from "../config.js";
import { brainHome, createBrain } from "../setup.js";

export const usage = `serve [--port N] [--host H] [--no-auth] [--nats URL[,URL...] [--node NAME]]
                              the daemon: REST + SSE under /v1, the web UI, /openapi.json (port: $BRAIN_PORT or 7777);
                              --nats (or $BRAIN_NATS): cluster mode, sessions on NATS JetStream shared by every node`;

export function portOf(value: string | undefined): number {
  if (value === undefined || value === "") return DEFAULT_PORT;
  const port = wholeNumber("--port", value, "a port from 0 to 65535");
  if (port > 65535) throw new UsageError(`--port takes a port from 0 to 65535, not "${value}"`);
  return port;
}

export async function command(args: string[]): Promise<number> {
  const { values, positionals } = parse(args, {
    port: { type: "string" },
    host: { type: "string" },
    "no-auth": { type: "boolean" },
    nats: { type: "string" },
    node: { type: "string" },
  });
  refuseExtra(positionals, 0, "serve takes no arguments (the port: --port N)");
  const port = portOf(str(values.port) ?? process.env.BRAIN_PORT);
  const host = str(values.host) ?? DEFAULT_HOST;
  const noAuth = values["no-auth"] === true;
  const loaded = loadConfig(str(values.config));
  const home = brainHome();
  const tokens = noAuth ? undefined : loadOrCreateTokens(home);
  // Token values are secrets like any key: no event, error or log line may hold one.
  const tokenSecrets = tokens
    ? [
        ...tokens.file.tokens.map((t) => ({ name: "token", value: t.token })),
        { name: "token_secret", value: tokens.file.secret },
      ]
    : [];
  // A `brain run` on a session the daemon has open is told to go through the daemon, at this URL.
  const holder: LogHolder = { kind: "daemon" };
  // The command line, then the environment, then brain.config.json's `cluster` block.
  const configured = loaded.config.cluster;
  const natsUrls = str(values.nats) ?? process.env.BRAIN_NATS ?? configured?.nats.join(",");
  const node = str(values.node) ?? configured?.node;
  const servers = natsUrls ? natsServers(natsUrls) : undefined;
  const ttl = servers ? leaseTtl(process.env.BRAIN_LEASE_TTL_MS, configured?.lease_ttl_ms) : undefined;
  if (servers && noAuth) refuseOpenCluster(servers);
  const cluster = servers
    ? await openClusterStore({
        servers,
        home,
        ...(node ? { node } : {}),
        ...(ttl ? { leaseTtlMs: ttl } : {}),
      })
    : undefined;
  const brain = createBrain(loaded, home, {
    holder,
    secrets: tokenSecrets,
    warmRunners: true,
    openSessionsPerTenant: loaded.config.limits?.open_sessions_per_tenant ?? DEFAULT_OPEN_SESSIONS_PER_TENANT,
    storedSessionsPerTenant:
      loaded.config.limits?.stored_sessions_per_tenant ?? DEFAULT_STORED_SESSIONS_PER_TENANT,
    logBytesPerSession: loaded.config.limits?.log_bytes_per_session ?? DEFAULT_LOG_BYTES_PER_SESSION,
    logBytesPerTenant: loaded.config.limits?.log_bytes_per_tenant ?? DEFAULT_LOG_BYTES_PER_TENANT,
    ...(cluster ? { store: cluster.store } : {}),
  });
  let daemon: Awaited<ReturnType<typeof startDaemon>>;
  try {
    daemon = await startDaemon({
      brain,
      home,
      host,
      port,
      ...(tokens ? { tokens: tokens.file.tokens } : {}),
      defaults: loaded.config.defaults ?? {},
      eventStreamsPerTenant:
        loaded.config.limits?.event_streams_per_tenant ?? DEFAULT_EVENT_STREAMS_PER_TENANT,
      ...(loaded.config.limits?.log_reads_per_tenant
        ? { logReadsPerTenant: loaded.config.limits.log_reads_per_tenant }
        : {}),
      ...(loaded.config.limits?.request_bodies_per_tenant
        ? { bodiesPerTenant: loaded.config.limits.request_bodies_per_tenant }
        : {}),
      ...(loaded.config.limits?.hitl_waits_per_tenant
        ? { hitlWaitsPerTenant: loaded.config.limits.hitl_waits_per_tenant }
        : {}),
      ...(loaded.config.limits?.forwards_per_tenant
        ? { forwardsPerTenant: loaded.config.limits.forwards_per_tenant }
        : {}),
      ...(loaded.config.retention ? { retention: retentionPolicy(loaded.config.retention) } : {}),
      agents: homeAgents(home),
      ...(cluster ? { router: cluster.router } : {}),
      onWarning: (message) => process.stderr.write(`brain serve: ${brain.redactor.redact(message)}\n`),
      // Inspected, not only its stack: its cause chain and an AggregateError's members say what went wrong.
      onError: (err) => process.stderr.write(`brain serve: ${brain.redactor.redact(inspect(err))}\n`),
    });
  } catch (err) {
    await brain.close();
    await cluster?.close();
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "EADDRINUSE")
      throw new UsageError(`port ${port} on ${host} is in use: pick another with --port N`);
    throw err;
  }
  holder.url = daemon.url;
  const say = (line: string) => process.stdout.write(`${line}\n`);
  say(
    `brain daemon on ${daemon.url}  (sessions in ${cluster && servers ? `NATS ${shownServers(servers)}, node ${cluster.node}, native files in ${home}` : home}; harnesses: ${brain.harnesses.names().join(", ")})`,
  );
  if (tokens) {
    const admin = tokens.file.tokens[0]!.token;
    say(`web UI: ${daemon.url}/#token=${admin}`);
    say(
      `token: ${tokens.created ? "new, " : ""}in ${tokensPath(home)} (mode 0600); \`brain token\` prints it, \`brain token add --tenant T\` adds one`,
    );
  } else {
    say(`web UI: ${daemon.url}/`);
    process.stderr.write(
      `warning: --no-auth: anyone who can reach this port on this machine${cluster ? ", or publish on its NATS," : ""} can drive every session\n`,
    );
  }
  say(`API: ${daemon.url}/openapi.json · stop with Ctrl-C`);
  await new Promise<void>((resolve) => {
    const stop = () => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      resolve();
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  });
  process.stderr.write("brain serve: stopping\n");
  await daemon.close();
  await brain.close();
  await cluster?.close();
  return 0;
}

/** brain.config.json `retention` in the daemon's units. */
function retentionPolicy(r: NonNullable<BrainConfig["retention"]>): RetentionPolicy {
  const ms = (minutes: number | undefined) => (minutes === undefined ? undefined : minutes * 60_000);
  const policy: RetentionPolicy = {};
  const set = <K extends keyof RetentionPolicy>(key: K, value: RetentionPolicy[K] | undefined) => {
    if (value !== undefined) policy[key] = value;
  };
  set("compactAfterMs", ms(r.compact_after_minutes));
  set("archiveAfterMs", ms(r.archive_segments_after_minutes));
  set("dropAfterMs", ms(r.drop_segments_after_minutes));
  set("maxBytes", r.max_log_mb === undefined ? undefined : r.max_log_mb * 1024 * 1024);
  return policy;
}
