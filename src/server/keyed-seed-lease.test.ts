// Keyed forks in a cluster: the node seeding a fork holds the fork's lease meanwhile, so a retry under the key on
// another node tells a fork being made by a live node (it waits for it, and answers 409 while it still seeds)
// from one a dead node left half made (removed once the dead node's lease runs out, then made again), with no
// rule on the record's age. Both through two daemons on one NATS prefix, routed as `brain serve --cluster` runs.
import path from "node:path";
import { pathToFileURL } from "node:url";
import { expect, it } from "vitest";
import type { Brain } from "../core/brain.js";
import { bodyDigest } from "../core/command-keys.js";
import { startTestDaemon, type TestDaemon } from "../testing/daemon.js";
import { raw } from "../testing/http.js";
import { useNatsCluster } from "../testing/nats-bed.js";
import { startStoreNode, type TestNode } from "../testing/nats-store.js";
import { scriptChild } from "../testing/processes.js";
import { keyedSessionId } from "./keyed-creates.js";
import { NatsCommandRouter } from "./nats-commands.js";

const bed = useNatsCluster();
const BODY = { checkpoint: "latest" };

async function daemonOn(node: TestNode, name: string, prefix: string, extra = {}): Promise<TestDaemon> {
  const router = new NatsCommandRouter(node.nc, {
    prefix,
    node: name,
    owner: (id) => node.store.owner(id),
    holds: (id) => node.store.holds(id),
  });
  return startTestDaemon({ store: node.store, router, ...extra });
}

/** A source session with a checkpoint whose native state remembers KIWI, closed. */
async function checkpointedSource(brain: Brain): Promise<string> {
  const source = await brain.create({ harness: "echo" });
  await (await source.prompt("remember KIWI")).settled;
  await source.checkpoint();
  await brain.closeSession(source.id);
  return source.id;
}

const fork = (d: TestDaemon, source: string) =>
  raw(d.url, "POST", `/v1/sessions/${source}/fork`, {
    token: d.tokens.admin,
    headers: { "Idempotency-Key": "f1" },
    body: BODY,
  });

async function expectWholeFork(brain: Brain, id: string, source: string): Promise<void> {
  const events = await brain.events(id);
  expect(events[0]).toMatchObject({ type: "session.opened", data: { forked_from: { session: source } } });
}

it("answers a retry on another node while the first still seeds the fork with 409, then with the whole fork", async () => {
  const prefix = bed.prefix("seeding");
  const a = await startStoreNode(bed.cluster, "node-a", { prefix });
  const b = await startStoreNode(bed.cluster, "node-b", { prefix });
  const daemons: TestDaemon[] = [];
  try {
    const da = await daemonOn(a, "node-a", prefix);
    daemons.push(da);
    const db = await daemonOn(b, "node-b", prefix, { tokens: da.tokens, keyedWaitMs: 500 });
    daemons.push(db);
    const source = await checkpointedSource(da.brain);
    // Node A's restore of the checkpoint into the fork's native dir waits until the test lets it go on.
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let seeding = false;
    const checkpointsOf = a.store.checkpoints.bind(a.store);
    a.store.checkpoints = (id) => {
      const checkpoints = checkpointsOf(id);
      const restore = checkpoints.restore.bind(checkpoints);
      checkpoints.restore = async (...args) => {
        seeding = true;
        await held;
        return restore(...args);
      };
      return checkpoints;
    };
    const first = fork(da, source);
    // Awaited below; a failure before then must not leave it unhandled.
    first.catch(() => {});
    await expect.poll(() => seeding, { timeout: 30_000 }).toBe(true);
    const id = keyedSessionId("default", "fork", source, "f1");
    // Node A is alive and seeding: the retry is neither answered with the half-made fork nor makes it again.
    const early = await fork(db, source);
    expect(early.status, JSON.stringify(early.body)).toBe(409);
    expect(JSON.stringify(early.body)).toMatch(
      /still being made after \d+ s \(session k[^ ]* is owned by node node-a/,
    );
    expect((await da.brain.record(id)).idempotency?.key).toBe("f1");
    release();
    expect((await first).status).toBe(201);
    const late = await fork(db, source);
    expect([late.status, late.body.id]).toEqual([201, id]);
    await expectWholeFork(db.brain, id, source);
  } finally {
    for (const d of daemons) await d.cleanup();
    await a.close();
    await b.close();
  }
});

const dist = (module: string) =>
  JSON.stringify(pathToFileURL(path.join(import.meta.dirname, "../../dist/src", module)).href);

/** A node in a child: its first fork, under key f1, never returns from restoring into the fork's native dir. */
function childNode(servers: string[], prefix: string, source: string): string {
  const id = keyedSessionId("default", "fork", source, "f1");
  const sent = bodyDigest(["fork", source, BODY]);
  return `import { writeSync } from "node:fs";
    import { mkdtempSync } from "node:fs";
    import { tmpdir } from "node:os";
    import { connect } from "@nats-io/transport-node";
    const { openNatsContext } = await import(${dist("store/nats/context.js")});
    const { NatsSessionStore } = await import(${dist("store/nats/session-store.js")});
    const { Brain } = await import(${dist("core/brain.js")});
    const { HarnessRegistry } = await import(${dist("core/registry.js")});
    const { echoFactory } = await import(${dist("testing/brain.js")});
    const { ToolRouter } = await import(${dist("tools/router.js")});
    setInterval(() => {}, 60_000);
    const nc = await connect({ servers: ${JSON.stringify(servers)} });
    const ctx = await openNatsContext(nc, { prefix: ${JSON.stringify(prefix)}, leaseTtlMs: 3000 });
    const home = mkdtempSync(tmpdir() + "/brain-seedlease-child-");
    const store = new NatsSessionStore(ctx, { home, holder: { node: "node-dead" } });
    const checkpointsOf = store.checkpoints.bind(store);
    store.checkpoints = (id) => {
      const checkpoints = checkpointsOf(id);
      checkpoints.restore = () => {
        writeSync(1, "seeding\\n");
        return new Promise(() => {});
      };
      return checkpoints;
    };
    const brain = new Brain({ store, harnesses: new HarnessRegistry([echoFactory()]), tools: new ToolRouter([]) });
    await brain.fork(${JSON.stringify(source)}, "latest", {
      id: ${JSON.stringify(id)},
      idempotency: { key: "f1", sent: ${JSON.stringify(sent)} },
    });`;
}

it("makes the fork again on a retry on another node once the node killed while seeding it lost its lease", async () => {
  const prefix = bed.prefix("killed");
  // A lease of 3 s, so that the retry outwaits the dead node's within its keyed wait (30 s).
  const b = await startStoreNode(bed.cluster, "node-b", { prefix, leaseTtlMs: 3000 });
  let db: TestDaemon | undefined;
  try {
    db = await daemonOn(b, "node-b", prefix);
    const source = await checkpointedSource(db.brain);
    const child = scriptChild(childNode(bed.cluster.servers, prefix, source));
    try {
      await expect.poll(child.out, { timeout: 60_000 }).toContain("seeding");
    } finally {
      await child.kill();
    }
    const id = keyedSessionId("default", "fork", source, "f1");
    expect((await db.brain.record(id)).idempotency?.key).toBe("f1");
    expect(await db.brain.lastSeq(id)).toBe(0);
    // At once, long before any age rule: the dead node's lease tells that nobody makes it any more.
    const retried = await fork(db, source);
    expect([retried.status, retried.body.id], JSON.stringify(retried.body)).toEqual([201, id]);
    await expectWholeFork(db.brain, id, source);
  } finally {
    await db?.cleanup();
    await b.close();
  }
});
