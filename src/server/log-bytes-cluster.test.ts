// limits.log_bytes_per_session in cluster mode: the bound holds against what the events stream holds of the
// session's log (NatsSessionStore.logBytes) and what the object store holds of its checkpoints, as it does
// against the embedded store's files.
import { describe, expect, it } from "vitest";
import type { SessionEvent } from "../protocol/events.js";
import { startTestDaemon } from "../testing/daemon.js";
import { collect, newSession, raw, settled } from "../testing/http.js";
import { useNatsCluster } from "../testing/nats-bed.js";
import { startStoreNode, type TestNode } from "../testing/nats-store.js";

const BOUND = 64 << 10;
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
});
