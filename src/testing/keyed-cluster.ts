// Keyed forks across two cluster nodes in tests: daemons on one NATS prefix, routed as `brain serve --cluster`
// runs, a checkpointed source to fork, the keyed fork request, and a checkpoint restore held so that a node's
// seeding of a fork goes on only when the test lets it (src/server/keyed-seed-*.test.ts); and two daemons on two
// nodes of one prefix, routed or not, for the keyed and refused deletes across nodes (src/server/*-cluster.test.ts).
import { expect } from "vitest";
import type { Brain } from "../core/brain.js";
import { keyedSessionId } from "../server/keyed-creates.js";
import { NatsCommandRouter } from "../server/nats-commands.js";
import { startTestDaemon, type TestDaemon } from "./daemon.js";
import { raw } from "./http.js";
import type { NatsBed } from "./nats-bed.js";
import { startStoreNode, type TestNode } from "./nats-store.js";

/** The body of every keyed fork here: a retry (or a request at the same moment) sends the same. */
export const FORK_BODY = { checkpoint: "latest" };

/** A daemon on `node`'s store whose commands for sessions other nodes own go there through NATS. */
export async function daemonOn(
  node: TestNode,
  name: string,
  prefix: string,
  extra: Partial<Parameters<typeof startTestDaemon>[0]> = {},
): Promise<TestDaemon> {
  const router = new NatsCommandRouter(node.nc, {
    prefix,
    node: name,
    owner: (id) => node.store.owner(id),
    holds: (id) => node.store.holds(id),
  });
  return startTestDaemon({ store: node.store, router, ...extra });
}

/** A source session with a checkpoint whose native state remembers KIWI, closed. */
export async function checkpointedSource(brain: Brain): Promise<string> {
  const source = await brain.create({ harness: "echo" });
  await (await source.prompt("remember KIWI")).settled;
  await source.checkpoint();
  await brain.closeSession(source.id);
  return source.id;
}

/** POST /fork of `source` on daemon `d` under Idempotency-Key f1. */
export const keyedFork = (d: TestDaemon, source: string) =>
  raw(d.url, "POST", `/v1/sessions/${source}/fork`, {
    token: d.tokens.admin,
    headers: { "Idempotency-Key": "f1" },
    body: FORK_BODY,
  });

/** The fork is whole: its log starts with its session.opened, naming its source. */
export async function expectWholeFork(brain: Brain, id: string, source: string): Promise<void> {
  const events = await brain.events(id);
  expect(events[0]).toMatchObject({ type: "session.opened", data: { forked_from: { session: source } } });
}

/**
 * Holds every checkpoint restore of `node`'s store (a fork's seeding of its native dir) until `release`;
 * `seeding()` tells whether one began.
 */
export function holdRestores(node: TestNode): { seeding: () => boolean; release: () => void } {
  let release!: () => void;
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  let seeding = false;
  const checkpointsOf = node.store.checkpoints.bind(node.store);
  node.store.checkpoints = (id) => {
    const checkpoints = checkpointsOf(id);
    const restore = checkpoints.restore.bind(checkpoints);
    checkpoints.restore = async (...args) => {
      seeding = true;
      await held;
      return restore(...args);
    };
    return checkpoints;
  };
  return { seeding: () => seeding, release };
}

export interface TwoNodes {
  a: TestNode;
  b: TestNode;
  da: TestDaemon;
  db: TestDaemon;
  source: string;
  id: string;
}

/**
 * Runs `test` on nodes A and B on one prefix of `bed` (named `name`), each with a daemon (B's keyed wait
 * `keyedWaitMs`), and a checkpointed source to fork under key f1 (the fork's id `id`); closes them after.
 */
export async function onTwoNodes(
  bed: NatsBed,
  name: string,
  keyedWaitMs: number | undefined,
  test: (nodes: TwoNodes) => Promise<void>,
): Promise<void> {
  const prefix = bed.prefix(name);
  const a = await startStoreNode(bed.cluster, "node-a", { prefix });
  const b = await startStoreNode(bed.cluster, "node-b", { prefix });
  const daemons: TestDaemon[] = [];
  try {
    const da = await daemonOn(a, "node-a", prefix);
    daemons.push(da);
    const db = await daemonOn(b, "node-b", prefix, { tokens: da.tokens, keyedWaitMs });
    daemons.push(db);
    const source = await checkpointedSource(da.brain);
    const id = keyedSessionId("default", "fork", source, "f1");
    await test({ a, b, da, db, source, id });
  } finally {
    for (const d of daemons) await d.cleanup();
    await a.close();
    await b.close();
  }
}

/** Daemons A and B on store nodes node-a and node-b of one prefix, B with A's tokens. */
export interface TwoDaemons {
  a: TestDaemon;
  b: TestDaemon;
  nodeA: TestNode;
  nodeB: TestNode;
}

/**
 * Runs `test` with daemons on two store nodes on a fresh prefix of `bed` (named `name`, one replica), routed as
 * `brain serve --cluster` runs them when `routed` (a command for a session open on the other node goes there);
 * closes them after.
 */
export async function withTwoDaemons(
  bed: NatsBed,
  name: string,
  routed: boolean,
  test: (two: TwoDaemons) => Promise<void>,
): Promise<void> {
  const prefix = bed.prefix(name);
  const nodes: TestNode[] = [];
  const daemons: TestDaemon[] = [];
  const start = (node: TestNode, nodeName: string, extra: Partial<Parameters<typeof startTestDaemon>[0]>) =>
    routed ? daemonOn(node, nodeName, prefix, extra) : startTestDaemon({ store: node.store, ...extra });
  try {
    for (const nodeName of ["node-a", "node-b"]) {
      nodes.push(await startStoreNode(bed.cluster, nodeName, { prefix, replicas: 1 }));
    }
    const [nodeA, nodeB] = nodes as [TestNode, TestNode];
    const a = await start(nodeA, "node-a", {});
    daemons.push(a);
    const b = await start(nodeB, "node-b", { tokens: a.tokens });
    daemons.push(b);
    await test({ a, b, nodeA, nodeB });
  } finally {
    for (const d of daemons) await d.cleanup();
    for (const node of nodes) await node.close();
  }
}
