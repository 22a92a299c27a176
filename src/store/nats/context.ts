// What every part of the cluster store shares: one NATS connection, the events stream (one subject per
// session), the KV buckets of session records, leases and deleted sessions, and the checkpoint object store, made
// on first use.
import {
  JetStreamApiError,
  type JetStreamClient,
  type JetStreamManager,
  jetstream,
  jetstreamManager,
} from "@nats-io/jetstream";
import { type KV, Kvm } from "@nats-io/kv";
import { type ObjectStore, Objm } from "@nats-io/obj";
import type { NatsConnection } from "@nats-io/transport-node";
import { TOMBSTONE_WINDOW_MS } from "../../core/deleted-sessions.js";
import { sleep } from "../../core/sleep.js";
import { errorMessage, msgSizeOf, NatsStoreError, natsFailure } from "./errors.js";

export interface NatsStoreConfig {
  /** Names of the stream and buckets start with this (default "brain"): several Brains can share a NATS. */
  prefix?: string;
  /** Raft replicas of the stream and buckets (default 3: a cluster survives the loss of one node). */
  replicas?: number;
  /**
   * How long a session's lease lasts without renewal (ms); renewed every third of it. Unset: the leases bucket's
   * (10 s when this node makes it). The cluster has one: a value other than an existing bucket's is refused.
   */
  leaseTtlMs?: number;
  /** How long a publish may keep retrying through a NATS leader election before the append fails (ms). */
  publishRetryMs?: number;
}

/** How long one read of the log waits for an answer before it is asked again (within publishRetryMs). */
const READ_TIMEOUT_MS = 3000;

export interface NatsContext {
  readonly nc: NatsConnection;
  readonly js: JetStreamClient;
  readonly jsm: JetStreamManager;
  /**
   * For reads of the log (a message get), with a short request timeout: a get asked of a stream between leaders
   * goes unanswered, and with the 15 s management timeout one such try spent the whole retry budget
   * (publishRetryMs), so the read failed where a second try would have found the new leader.
   */
  readonly reads: JetStreamManager;
  readonly stream: string;
  readonly records: KV;
  readonly leases: KV;
  /** Tenants' tombstones of keyed deletes (./deleted-sessions.ts); max_age is their window. */
  readonly deleted: KV;
  readonly blobs: ObjectStore;
  readonly publishRetryMs: number;
  readonly replicas: number;
  readonly leaseTtlMs: number;
  /**
   * The events stream's max_msg_size, when it has one: a batch is cut into messages under it. Read at setup and
   * again when the stream refuses a message as larger (./errors.ts), as an operator may change it while nodes run.
   */
  maxMsgSize: number | undefined;
  subject(session: string): string;
}

/**
 * Sets up (or finds) the stream and buckets. Nodes starting together race to create them and a busy cluster
 * can be slow to answer: a failed attempt is retried for a while before the node gives up.
 */
export async function openNatsContext(
  nc: NatsConnection,
  config: NatsStoreConfig = {},
  setupMs = 60_000,
): Promise<NatsContext> {
  const started = Date.now();
  const deadline = started + setupMs;
  for (let attempt = 1; ; attempt++) {
    try {
      return await setUp(nc, config);
    } catch (err) {
      if (Date.now() >= deadline || err instanceof NatsConfigError) throw err;
      if (err instanceof JetStreamOff && Date.now() - started >= JETSTREAM_OFF_GRACE_MS) throw err;
      await sleep(Math.min(2000, 200 * attempt));
    }
  }
}

async function setUp(nc: NatsConnection, config: NatsStoreConfig): Promise<NatsContext> {
  const prefix = config.prefix ?? "brain";
  if (!/^[A-Za-z0-9_-]+$/.test(prefix)) {
    throw new NatsConfigError(
      `cluster store: NATS: bad prefix ${JSON.stringify(prefix)}: use letters, digits, '_' or '-'`,
    );
  }
  const replicas = config.replicas ?? 3;
  const stream = `${prefix}_events`;
  const subjectRoot = `${prefix}.ev`;
  try {
    const jsm = await jetstreamManager(nc, { timeout: 15_000 });
    const reads = await jetstreamManager(nc, { timeout: READ_TIMEOUT_MS, checkAPI: false });
    const js = jetstream(nc);
    const info = await jsm.streams.info(stream).catch(async () => {
      return await jsm.streams.add({
        name: stream,
        subjects: [`${subjectRoot}.*`],
        num_replicas: replicas,
        // Two minutes (the default) is what publish retries through a leader election need for dedup.
        duplicate_window: 120_000_000_000,
      });
    });
    const kvm = new Kvm(nc);
    // No direct gets: they are answered by any replica, possibly one behind, and a record or lease read must
    // see the last write (read, patch, compare-and-set would otherwise lose patches).
    const records = await kvm.create(`${prefix}_sessions`, { replicas, history: 1, allow_direct: false });
    const objm = new Objm(nc);
    const blobs = await objm.create(`${prefix}_checkpoints`, { replicas });
    // The bucket's max_age is the lease's TTL: an owner that stops renewing loses its key to expiry.
    const leases = await kvm.create(`${prefix}_owners`, {
      replicas,
      history: 1,
      ttl: config.leaseTtlMs ?? DEFAULT_LEASE_TTL_MS,
      allow_direct: false,
    });
    const deleted = await kvm.create(`${prefix}_deleted`, {
      replicas,
      history: 1,
      ttl: TOMBSTONE_WINDOW_MS,
      allow_direct: false,
    });
    // An existing bucket keeps its max_age whatever this node asked for.
    const leaseTtlMs = leaseTtlOf(`${prefix}_owners`, (await leases.status()).ttl, config.leaseTtlMs);
    return {
      nc,
      js,
      jsm,
      reads,
      stream,
      records,
      blobs,
      replicas,
      publishRetryMs: config.publishRetryMs ?? 15_000,
      subject: (session) => `${subjectRoot}.${session}`,
      leases,
      deleted,
      leaseTtlMs,
      maxMsgSize: msgSizeOf(info.config.max_msg_size),
    };
  } catch (err) {
    if (err instanceof NatsConfigError) throw err;
    if (err instanceof Error && err.name === "JetStreamNotEnabled") {
      throw new JetStreamOff(
        `cluster store: the NATS server at ${nc.getServer()} does not run JetStream, which keeps the sessions in cluster mode: start every nats-server of the cluster with JetStream (-js, or a jetstream {} block in its config; README, "Cluster mode") (NATS: ${errorMessage(err)})`,
      );
    }
    // A server that is not clustered gives the same answer however long it is asked: say so, and at once.
    if (err instanceof JetStreamApiError && err.code === REPLICAS_NOT_SUPPORTED) {
      throw new NatsConfigError(
        `cluster store: the NATS server is not part of a cluster, and cluster mode keeps ${replicas} replicas of its stream and buckets (a session's events survive the loss of a NATS node): run nats-server as a cluster of 3 nodes with JetStream (README, "Cluster mode") (NATS: ${errorMessage(err)})`,
      );
    }
    throw natsFailure("cluster store: cannot set up the stream and buckets", err);
  }
}

/**
 * No server answered the JetStream API: none of them runs it. Asked again for a few seconds only (a server may be
 * starting), not for the whole setup time: `brain serve` otherwise waited a minute to say so.
 */
class JetStreamOff extends NatsStoreError {
  constructor(message: string) {
    super("brain_error", message);
  }
}

const JETSTREAM_OFF_GRACE_MS = 5000;

/** JetStream's answer to a replicated stream asked of a server that is not clustered. */
const REPLICAS_NOT_SUPPORTED = 10074;

const DEFAULT_LEASE_TTL_MS = 10_000;

/** A setting NATS cannot take or that disagrees with the cluster's: asking again will not help. */
export class NatsConfigError extends NatsStoreError {
  constructor(message: string) {
    super("brain_error", message);
  }
}

/**
 * The lease TTL this node must use: the owners bucket's max_age, which the server enforces. A node not told one
 * takes the bucket's. One told another is refused rather than reconciled: lowering the bucket's max_age would
 * let keys of nodes renewing at the old, slower pace expire under them (two owners of a session), and raising it
 * from one node's config would change every node's failover time behind its operator's back.
 */
export function leaseTtlOf(bucket: string, bucketTtlMs: number, configuredMs: number | undefined): number {
  if (bucketTtlMs > 0 && (configuredMs === undefined || configuredMs === bucketTtlMs)) return bucketTtlMs;
  const stream = `KV_${bucket}`;
  if (bucketTtlMs <= 0) {
    throw new NatsConfigError(
      `cluster store: the leases bucket ${bucket} (stream ${stream}) never expires its keys, so a dead owner would hold its sessions forever; delete the stream while no Brain node runs and start again (it is made with the lease TTL)`,
    );
  }
  throw new NatsConfigError(
    `cluster store: this node's lease TTL is ${configuredMs} ms (leaseTtlMs, BRAIN_LEASE_TTL_MS or cluster.lease_ttl_ms), but the leases bucket ${bucket} expires leases after ${bucketTtlMs} ms (max_age of stream ${stream}), which every node must use: set it to ${bucketTtlMs} or leave it unset. To change the cluster's TTL, raise max_age of ${stream} (safe while nodes run: they renew more often than needed) and then every node's setting, or lower it only with every Brain node stopped`,
  );
}
