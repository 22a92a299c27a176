// Cluster mode for `brain serve --nats URL[,URL...]`: the session store on NATS JetStream instead of files.
// Any number of nodes share the sessions; each session is owned by one node at a time through its lease.
import { hostname } from "node:os";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { isLoopback } from "../server/loopback.js";
import { NatsCommandRouter } from "../server/nats-commands.js";
import { openNatsContext } from "../store/nats/context.js";
import { NatsSessionStore } from "../store/nats/session-store.js";
import { UsageError } from "./args.js";

export interface ClusterStore {
  store: NatsSessionStore;
  /** Commands to a session's owner, by request-reply. */
  router: NatsCommandRouter;
  node: string;
  close(): Promise<void>;
}

/** The lease TTL: $BRAIN_LEASE_TTL_MS (`env`) over the config file's `cluster.lease_ttl_ms`, held to the same rule. */
export function leaseTtl(env: string | undefined, configured: number | undefined): number | undefined {
  if (!env) return configured;
  const ms = /^\d+$/.test(env) ? Number(env) : Number.NaN;
  if (!Number.isSafeInteger(ms) || ms < 500) {
    throw new UsageError(
      `BRAIN_LEASE_TTL_MS takes the lease TTL in milliseconds (a whole number, 500 or more), not "${env}"`,
    );
  }
  return ms;
}

/** What separates the URLs of a --nats list. */
const LIST_SEPARATOR = /[\s,]+/;

/** `nats://a:4222,nats://b:4222` (or with spaces) → the server list; each must be a nats:// URL. */
export function natsServers(value: string): string[] {
  const servers = value
    .split(LIST_SEPARATOR)
    .map((s) => s.trim())
    .filter(Boolean);
  if (servers.length === 0)
    throw new UsageError("--nats needs at least one server URL, e.g. nats://127.0.0.1:4222");
  for (const server of servers) {
    let url: URL;
    try {
      url = new URL(server);
    } catch {
      throw new UsageError(
        `--nats: ${quotedServer(server, value)} is not a URL; write it as nats://HOST:PORT`,
      );
    }
    if (url.protocol !== "nats:" && url.protocol !== "tls:") {
      throw new UsageError(
        `--nats: ${quotedServer(server, value)} is not a nats:// URL; write it as nats://HOST:PORT`,
      );
    }
  }
  return servers;
}

/**
 * `--no-auth` runs every command that reaches the daemon unchecked, and in cluster mode commands also come over
 * NATS (forwarded by the other nodes, or published by any NATS client): without tokens, anyone who can publish
 * on the NATS drives every session. So, as --no-auth's HTTP listener must be on loopback, so must its NATS.
 */
export function refuseOpenCluster(servers: string[]): void {
  const remote = servers.find((server) => !isLoopback(new URL(server).hostname));
  if (remote === undefined) return;
  throw new UsageError(
    `--no-auth is only allowed with NATS on a loopback address, not ${shownServer(remote)}: without tokens, anyone who can publish on that NATS could drive every session; drop --no-auth (give every node a copy of the same tokens.json) or run NATS on 127.0.0.1`,
  );
}

/**
 * A NATS URL as Brain prints it: credentials in it (nats://USER:PASSWORD@ or nats://TOKEN@) are replaced by ***,
 * so the startup line and errors, which end up in logs, do not hold them.
 */
export function shownServer(server: string): string {
  // Up to the last @, whether the URL parses or not: a password may hold an @ of its own.
  const at = server.lastIndexOf("@");
  if (at === -1) return server;
  const scheme = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.exec(server)?.[0] ?? "";
  return `${scheme}***${server.slice(at)}`;
}

/**
 * A refused piece of the --nats list, as its error quotes it. A comma or space in a URL's user name or password
 * cuts the URL in two there, and a piece without its `@` would be quoted with the credential's first part in it:
 * such a piece is not quoted; the error says so and shows the whole list, its credentials hidden URL by URL.
 */
function quotedServer(piece: string, value: string): string {
  const shownList = value.replace(
    /[A-Za-z][A-Za-z0-9+.-]*:\/\/(?:(?![A-Za-z][A-Za-z0-9+.-]*:\/\/).)*/gs,
    shownServer,
  );
  const shown = shownServer(piece);
  if (shownList.split(LIST_SEPARATOR).includes(shown)) return `"${shown}"`;
  throw new UsageError(
    `--nats: a URL in "${shownList}" is cut in two: its user name or password holds a comma or a space, which separate the list's URLs; percent-encode it (%2C, %20)`,
  );
}

export function shownServers(servers: string[]): string {
  return servers.map(shownServer).join(",");
}

export async function openClusterStore(options: {
  servers: string[];
  home: string;
  node?: string;
  leaseTtlMs?: number;
}): Promise<ClusterStore> {
  const node = options.node ?? `${hostname()}-${process.pid}`;
  let nc: NatsConnection;
  try {
    // Reconnect forever: a NATS node going away must not take the Brain node with it.
    nc = await connect({ servers: options.servers, name: `brain ${node}`, maxReconnectAttempts: -1 });
  } catch (err) {
    throw new UsageError(
      `cannot reach NATS at ${options.servers.map(shownServer).join(", ")}: ${(err as Error).message}; start nats-server with JetStream (-js) or fix --nats`,
    );
  }
  try {
    const ctx = await openNatsContext(nc, options.leaseTtlMs ? { leaseTtlMs: options.leaseTtlMs } : {});
    const store = new NatsSessionStore(ctx, { home: options.home, holder: { node } });
    const ttl = ctx.leaseTtlMs;
    const router = new NatsCommandRouter(nc, {
      node,
      owner: (id) => store.owner(id),
      holds: (id) => store.holds(id),
      // A frozen owner is noticed within a fraction of its lease; it loses the session after one TTL.
      attemptMs: Math.min(2000, Math.max(250, Math.floor(ttl / 4))),
      patienceMs: 3 * ttl + 10_000,
    });
    return { store, router, node, close: () => nc.drain().catch(() => nc.close()) };
  } catch (err) {
    await nc.close().catch(() => {});
    throw err;
  }
}
