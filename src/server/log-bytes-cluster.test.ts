// limits.log_bytes_per_session in cluster mode: the bound holds against what the events stream holds of the
// session's log (NatsSessionStore.logBytes) and what the object store holds of its checkpoints, as it does
// against the embedded store's files. limits.log_bytes_per_tenant counts each record too (its config again), as
// the records bucket holds it (NatsSessionStore.recordBytes).
import { describe, expect, it } from "vitest";
import type { SessionEvent } from "../protocol/events.js";
import { startTestDaemon } from "../testing/daemon.js";
import { collect, newSession, raw, settled } from "../testing/http.js";
import { useNatsCluster } from "../testing/nats-bed.js";
import { startStoreNode, type TestNode } from "../testing/nats-store.js";

const BOUND = 64 << 10;
const TENANT_BOUND = 96 << 10;
const PROMPT = "x".repeat(12 << 10);

const bed = useNatsCluster({ nodes: 1 });

describe("log bytes per session, cluster store", () => {
  it("counts the session's messages in the stream, and refuses its prompts once they hold the bound", async () => {
    let node: TestNode | undefined;
    let d: Awaited<ReturnType<typeof startTestDaemon>> | undefined;
    try {
      node = await startStoreNode(bed.cluster, "node-a", { prefix: "bound", replicas: 1 });
      d = await startTestDaemon({ store: node.store, logBytesPerSession: BOUND });
      const daemon = d;
      const id = await newSession(daemon);
      const other = await newSession(daemon);
      const prompt = (session: string, text: string) =>
        raw(daemon.url, "POST", `/v1/sessions/${session}/prompt`, {
          token: daemon.tokens.admin,
          body: { text },
        });
      const taken: string[] = [];
      let refused: Awaited<ReturnType<typeof prompt>> | undefined;
      for (let i = 0; i < 16; i++) {
        const res = await prompt(id, PROMPT);
        if (res.status !== 202) {
          refused = res;
          break;
        }
        taken.push(res.body.turn as string);
        await collect(daemon.client(), id, settled(res.body.turn as string));
      }
      expect(refused?.status).toBe(429);
      expect(refused?.body.error).toMatchObject({
        code: "limit_reached",
        message: expect.stringMatching(
          new RegExp(`session ${id}'s log and \\d+ checkpoints hold \\d+ bytes.*\\(${BOUND}\\)`),
        ),
      });
      // The count is the stream's: what the session's messages hold, and only this session's; with the checkpoint
      // taken after every turn (the object store's manifests and blobs), past the bound.
      const bytes = await node.store.logBytes(id);
      const said = (refused?.body.error as { message?: string } | undefined)?.message ?? "";
      const held = Number(/hold (\d+) bytes/.exec(said)?.[1]);
      expect(held).toBeGreaterThanOrEqual(BOUND);
      expect(held).toBeGreaterThan(bytes);
      expect(bytes).toBeGreaterThan(taken.length * PROMPT.length);
      // The session has checkpoints (one per turn): a client's is refused too.
      const checkpoint = await raw(daemon.url, "POST", `/v1/sessions/${id}/checkpoints`, {
        token: daemon.tokens.admin,
      });
      expect(checkpoint.status).toBe(429);
      expect(await node.store.logBytes(other)).toBeLessThan(4096);
      const logged = (await daemon.client().log(id, 0, 10_000)).events;
      expect(logged.filter((e: SessionEvent) => e.type === "user.prompt").map((e) => e.turn)).toEqual(taken);
      // Another session goes on.
      expect((await prompt(other, "hi")).status).toBe(202);
    } finally {
      await d?.cleanup();
      await node?.close();
    }
  });
  it("counts each new session's record in its tenant's bound: a burst of creates makes no more than it lets", async () => {
    let node: TestNode | undefined;
    let d: Awaited<ReturnType<typeof startTestDaemon>> | undefined;
    try {
      node = await startStoreNode(bed.cluster, "node-a", { prefix: "tenantbound", replicas: 1 });
      d = await startTestDaemon({ store: node.store, logBytesPerTenant: TENANT_BOUND });
      const daemon = d;
      // Each new session holds its config twice, in its record and its first event: 16 KiB each, a sixth of it.
      const body = { harness: "echo", config: { system_prompt: "s".repeat(16 << 10) } };
      const burst = await Promise.all(
        Array.from({ length: 12 }, () =>
          raw(daemon.url, "POST", "/v1/sessions", { token: daemon.tokens.admin, body }),
        ),
      );
      const made = burst.filter((r) => r.status === 201).map((r) => r.body.id as string);
      expect(burst.filter((r) => r.status !== 201).map((r) => r.status)).toEqual(
        Array(12 - made.length).fill(429),
      );
      const store = node.store;
      const records = node.ctx.records;
      const recordSizes = await Promise.all(made.map(async (id) => (await records.get(id))?.length ?? 0));
      const sizes = await Promise.all(
        made.map(async (id, i) => recordSizes[i]! + (await store.logBytes(id))),
      );
      // Each was made while what the tenant held was under the bound: all but the last it admitted.
      const held = sizes.reduce((a, b) => a + b, 0);
      expect(held - Math.max(...sizes), `${made.length} sessions, ${sizes.join(" + ")} bytes`).toBeLessThan(
        TENANT_BOUND,
      );
      // What the store says each record holds is what the bucket holds.
      expect(await Promise.all(made.map((id) => store.recordBytes(id)))).toEqual(recordSizes);
    } finally {
      await d?.cleanup();
      await node?.close();
    }
  });
});
