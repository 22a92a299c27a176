// What every part of the cluster store shares: one NATS connection, the events stream (one subject per
// session), the session-record and lease KV buckets and the checkpoint object store, made on first use.
import { type JetStreamClient, type JetStreamManager, jetstream, jetstreamManager } from "@nats-io/jetstream";
import { type KV, Kvm } from "@nats-io/kv";
import { type ObjectStore, Objm } from "@nats-io/obj";
import type { NatsConnection } from "@nats-io/transport-node";
import { sleep } from "../../core/sleep.js";
import { natsFailure } from "./errors.js";

export interface NatsStoreConfig {
  /** Names of the stream and buckets start with this (default "brain"): several Brains can share a NATS. */
  prefix?: string;
  /** Raft replicas of the stream and buckets (default 3: a cluster survives the loss of one node). */
  replicas?: number;
  /** How long a session's lease lasts without renewal (ms, default 10 s); renewed every third of it. */
  leaseTtlMs?: number;
  /** How long a publish may keep retrying through a NATS leader election before the append fails (ms). */
  publishRetryMs?: number;
}

export interface NatsContext {
  readonly nc: NatsConnection;
  readonly js: JetStreamClient;
  readonly jsm: JetStreamManager;
  readonly stream: string;
  readonly records: KV;
  readonly leases: KV;
  readonly blobs: ObjectStore;
  readonly publishRetryMs: number;
  readonly replicas: number;
  readonly leaseTtlMs: number;
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
  const deadline = Date.now() + setupMs;
  for (let attempt = 1; ; attempt++) {
    try {
      return await setUp(nc, config);
    } catch (err) {
      if (Date.now() >= deadline || /bad prefix/.test(String(err))) throw err;
      await sleep(Math.min(2000, 200 * attempt));
    }
  }
}

async function setUp(nc: NatsConnection, config: NatsStoreConfig): Promise<NatsContext> {
  const prefix = config.prefix ?? "brain";
  if (!/^[A-Za-z0-9_-]+$/.test(prefix)) {
    throw natsFailure(
      "cluster store",
      new Error(`bad prefix ${JSON.stringify(prefix)}: use letters, digits, '_' or '-'`),
    );
  }
  const replicas = config.replicas ?? 3;
  const stream = `${prefix}_events`;
  const subjectRoot = `${prefix}.ev`;
  try {
    const jsm = await jetstreamManager(nc, { timeout: 15_000 });
    const js = jetstream(nc);
    await jsm.streams.info(stream).catch(async () => {
      await jsm.streams.add({
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
    const leaseTtlMs = config.leaseTtlMs ?? 10_000;
    // The bucket's max_age is the lease's TTL: an owner that stops renewing loses its key to expiry.
    const leases = await kvm.create(`${prefix}_owners`, {
      replicas,
      history: 1,
      ttl: leaseTtlMs,
      allow_direct: false,
    });
    return {
      nc,
      js,
      jsm,
      stream,
      records,
      blobs,
      replicas,
      publishRetryMs: config.publishRetryMs ?? 15_000,
      subject: (session) => `${subjectRoot}.${session}`,
      leases,
      leaseTtlMs,
    };
  } catch (err) {
    throw natsFailure("cluster store: cannot set up the stream and buckets", err);
  }
}
