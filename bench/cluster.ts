// Cluster store: appends through the NATS store (NatsEventLog group commit on a 3-node loopback cluster, R3)
// against raw JetStream publishes of the same batches from the same process, for one session and across 100
// sessions at once. Each run gets a fresh prefix (its own stream and buckets). Debian's nats-server is
// installed when missing (scripts/ensure-nats.mjs).
import { randomUUID } from "node:crypto";
import type { EventLog } from "../src/core/event-log.js";
import type { NewEvent } from "../src/protocol/events.js";
import { type NatsCluster, startNatsCluster } from "../src/testing/nats-cluster.js";
import { startStoreNode } from "../src/testing/nats-store.js";
import { type BenchRow, interleave, log, rateRow, type Sample, timed } from "./lib/measure.js";
import { median } from "./lib/stats.js";
import type { BenchOptions } from "./options.js";

/**
 * Appends in flight per session: a busy streaming session alone, and a realistic few each when 100 sessions
 * share the node (so each session still makes many commits).
 */
const IN_FLIGHT: Record<number, number> = { 1: 256, 100: 8 };

/** `n` appends of one event each, at most `inFlight` unresolved. */
async function flatOut(eventLog: EventLog, n: number, event: NewEvent, inFlight: number): Promise<void> {
  let issued = 0;
  const worker = async () => {
    while (issued < n) {
      issued++;
      await eventLog.append([event]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(inFlight, n) }, worker));
}

export async function clusterBench(opts: BenchOptions): Promise<BenchRow[]> {
  const perRun = opts.quick ? 10_000 : 30_000;
  const turn = randomUUID();
  const event: NewEvent = { type: "assistant.delta", turn, data: { text: "x".repeat(120) } };
  log(`cluster: starting a 3-node NATS cluster; ${perRun} appends per run, ${opts.reps} rounds`);
  const cluster = await startNatsCluster();
  let run = 0;
  try {
    const rows: BenchRow[] = [];
    for (const sessions of [1, 100]) {
      let batches: number[][] = [];
      const store = async (): Promise<Sample> => {
        const node = await startStoreNode(cluster, "bench", { prefix: `bench${++run}` });
        try {
          const logs: EventLog[] = [];
          const sizes: number[][] = [];
          for (let i = 0; i < sessions; i++) {
            await node.store.create({ id: `s${i}`, harness: "echo", config: {} });
            const eventLog = await node.store.openLog(`s${i}`);
            const own: number[] = [];
            eventLog.subscribe((batch) => own.push(batch.length));
            sizes.push(own);
            logs.push(eventLog);
          }
          const each = Math.floor(perRun / sessions);
          const { seconds, foreign } = await timed(() =>
            Promise.all(logs.map((l) => flatOut(l, each, event, IN_FLIGHT[sessions]!))),
          );
          await Promise.all(logs.map((l) => l.close()));
          batches = sizes;
          return {
            value: (each * sessions) / seconds,
            foreign,
            extra: { batch_events: median(sizes.flat()), commits: sizes.flat().length },
          };
        } finally {
          await node.close();
        }
      };
      const raw = () => rawPublish(cluster, `raw${++run}`, batches, event);
      await store(); // warm-up; also gives the batch sizes the raw side replays
      const samples = await interleave(`cluster-${sessions}`, opts.reps, { subject: store, baseline: raw });
      rows.push(
        rateRow(
          {
            id: `cluster-appends-${sessions}`,
            what: `durable appends through the NATS store, ${sessions === 1 ? "one session" : `${sessions} sessions at once`} (3 nodes, R3)`,
            unit: "events/s",
            baselineWhat:
              "raw JetStream publish of the same batches (one message each, acks awaited in order per subject)",
            notes: [
              `${perRun} appends of one event each, up to ${IN_FLIGHT[sessions]} in flight per session; the raw side replays the store's batch sizes`,
              "Debian nats-server 2.9.10 on loopback: acknowledged = stored by a raft quorum, not fsynced (2.9 has no sync_interval)",
            ],
          },
          { subject: samples.subject, baseline: samples.baseline },
          { kind: "none" },
        ),
      );
    }
    return rows;
  } finally {
    await cluster.stop();
  }
}

/** The same batches as raw publishes: per subject one message per batch, each awaited before the next. */
async function rawPublish(
  cluster: NatsCluster,
  prefix: string,
  batches: number[][],
  event: NewEvent,
): Promise<Sample> {
  const node = await startStoreNode(cluster, "raw", { prefix });
  try {
    const { js } = node.ctx;
    const total = batches.flat().reduce((a, b) => a + b, 0);
    const { seconds, foreign } = await timed(() =>
      Promise.all(
        batches.map(async (sizes, i) => {
          let seq = 1;
          for (const size of sizes) {
            const ts = new Date().toISOString();
            const body = JSON.stringify(
              Array.from({ length: size }, (_, k) => ({ seq: seq + k, ts, ...event })),
            );
            await js.publish(node.ctx.subject(`s${i}`), body);
            seq += size;
          }
        }),
      ),
    );
    return { value: total / seconds, foreign };
  } finally {
    await node.close();
  }
}
