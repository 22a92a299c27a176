// A runner flooding a session of a cluster (NATS) store while JetStream does not acknowledge its publishes (held in
// a proxy between Brain and a real nats-server): the log counts what it holds until the stream stores it, as the
// embedded log counts what waits for the disk, so the runner's reader pauses past BACKLOG_BYTES and the runner
// blocks on its pipe instead of growing Brain's heap; once the publishes pass, every event arrives in order.
import { existsSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterEach, describe, expect, it } from "vitest";
import { BACKLOG_BYTES } from "../../core/backlog.js";
import { Brain } from "../../core/brain.js";
import type { HarnessFactory } from "../../core/harness.js";
import { HarnessRegistry } from "../../core/registry.js";
import {
  blocked,
  expectWholeFlood,
  FLOOD_EVENTS,
  floodingRunner,
  PIPE_CHUNK,
  progressIn,
  waiting,
  withoutGate,
} from "../../testing/backlog.js";
import { events } from "../../testing/brain.js";
import { useNatsCluster } from "../../testing/nats-bed.js";
import { type NatsProxy, startNatsProxy } from "../../testing/nats-proxy.js";
import { BuiltinTools } from "../../tools/builtin.js";
import { ToolRouter } from "../../tools/router.js";
import { openNatsContext } from "./context.js";
import { NatsSessionStore } from "./session-store.js";

const nats = useNatsCluster();
let cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

/**
 * A Brain on a cluster store whose only way to NATS is a proxy that can hold its publishes to the events stream.
 * A held publish is retried, not failed, for as long as a test holds it.
 */
async function proxiedBrain(
  factory: HarnessFactory,
): Promise<{ brain: Brain; proxy: NatsProxy; store: NatsSessionStore }> {
  const target = new URL(nats.cluster.servers[0]!);
  const proxy = await startNatsProxy({ host: target.hostname, port: Number(target.port) });
  cleanup.push(() => proxy.close());
  const nc: NatsConnection = await connect({ servers: [proxy.url], ignoreClusterUpdates: true });
  cleanup.push(() => nc.close().catch(() => {}));
  const home = await mkdtemp(path.join(tmpdir(), "brain-nats-flood-"));
  cleanup.push(() => rm(home, { recursive: true, force: true }));
  const ctx = await openNatsContext(nc, {
    prefix: nats.prefix("flood"),
    replicas: 1,
    publishRetryMs: 600_000,
  });
  const store = new NatsSessionStore(ctx, { home, holder: { node: "node-a" } });
  const brain = new Brain({
    store,
    harnesses: new HarnessRegistry([factory]),
    tools: new ToolRouter([new BuiltinTools()]),
  });
  cleanup.push(async () => {
    proxy.release();
    await brain.close();
    await store.close();
  });
  return { brain, proxy, store };
}

/** Starts the flood with the events stream's acknowledgements held; returns the session and its turn. */
async function floodHeld(factory: HarnessFactory) {
  const { brain, proxy, store } = await proxiedBrain(factory);
  const session = await brain.create({ harness: "inline" });
  const turn = await session.prompt("flood");
  const native = store.paths(session.id).native;
  // Held before the first delta: none of the flood is stored, however busy the machine.
  await expect.poll(() => existsSync(path.join(native, "ready")), { timeout: 30_000 }).toBe(true);
  proxy.hold();
  writeFileSync(path.join(native, "go"), "");
  return { session, turn, proxy, progress: () => progressIn(native) };
}

describe("a runner flooding a session whose NATS stream does not acknowledge", () => {
  it("without the gate, grows what Brain holds with what the runner writes (the state the gate prevents)", async () => {
    const { session, proxy } = await floodHeld(withoutGate(floodingRunner()));
    try {
      await expect.poll(() => waiting(session), { timeout: 60_000 }).toBeGreaterThan(3 * BACKLOG_BYTES);
    } finally {
      proxy.release();
    }
  }, 240_000);

  it("is not read past the bound: it blocks on its pipe, and every event arrives in order once the stream acks", async () => {
    const { session, turn, proxy, progress } = await floodHeld(floodingRunner());
    try {
      const written = await blocked(session, progress);
      expect(written).toBeLessThan(FLOOD_EVENTS);
      expect(waiting(session)).toBeLessThanOrEqual(BACKLOG_BYTES + PIPE_CHUNK);
    } finally {
      proxy.release();
    }
    expect((await turn.settled).status).toBe("completed");
    expectWholeFlood(await events(session));
    // Everything it held is stored: the count is back to nothing.
    expect(waiting(session)).toBe(0);
  }, 240_000);
});
