// Keyed forks in a cluster: the node seeding a fork holds the fork's lease meanwhile, so a retry under the key on
// another node tells a fork being made by a live node (it waits for it, and answers 409 while it still seeds)
// from one a dead node left half made (removed once the dead node's lease runs out, then made again), with no
// rule on the record's age. Both through two daemons on one NATS prefix, routed as `brain serve --cluster` runs.
import path from "node:path";
import { pathToFileURL } from "node:url";
import { expect, it } from "vitest";
import { bodyDigest } from "../core/command-keys.js";
import type { TestDaemon } from "../testing/daemon.js";
import {
  checkpointedSource,
  daemonOn,
  expectWholeFork,
  FORK_BODY,
  keyedFork as fork,
  holdRestores,
  onTwoNodes,
} from "../testing/keyed-cluster.js";
import { useNatsCluster } from "../testing/nats-bed.js";
import { startStoreNode } from "../testing/nats-store.js";
import { scriptChild } from "../testing/processes.js";
import { keyedSessionId } from "./keyed-creates.js";

const bed = useNatsCluster();

it("answers a retry on another node while the first still seeds the fork with 409, then with the whole fork", async () => {
  await onTwoNodes(bed, "seeding", 500, async ({ a, da, db, source, id }) => {
    // Node A's restore of the checkpoint into the fork's native dir waits until the test lets it go on.
    const { seeding, release } = holdRestores(a);
    const first = fork(da, source);
    // Awaited below; a failure before then must not leave it unhandled.
    first.catch(() => {});
    await expect.poll(seeding, { timeout: 30_000 }).toBe(true);
    // Node A is alive and seeding: the retry is neither answered with the half-made fork nor makes it again.
    const early = await fork(db, source);
    expect(early.status, JSON.stringify(early.body)).toBe(409);
    expect(JSON.stringify(early.body)).toMatch(
      /still being made after \d+ s \(session k[^ ]* is owned by node node-a\)/,
    );
    expect((await da.brain.record(id)).idempotency?.key).toBe("f1");
    release();
    expect((await first).status).toBe(201);
    const late = await fork(db, source);
    expect([late.status, late.body.id]).toEqual([201, id]);
    await expectWholeFork(db.brain, id, source);
  });
});

const dist = (module: string) =>
  JSON.stringify(pathToFileURL(path.join(import.meta.dirname, "../../dist/src", module)).href);

/** A node in a child: its first fork, under key f1, never returns from restoring into the fork's native dir. */
function childNode(servers: string[], prefix: string, source: string): string {
  const id = keyedSessionId("default", "fork", source, "f1");
  const sent = bodyDigest(["fork", source, FORK_BODY]);
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
