// A fork or handoff made on one node of a cluster while a delete of its source is under way on another. On one node
// the two run one at a time (delete-fork-race.test.ts); nodes share no lock, so a fork made on node B between node
// A's check of the dependents and its removal was made (201) and the delete went on (204): the fork named a parent
// that was gone, and the part of its conversation read from the parent's log with it. The delete now marks the
// source's record first (core/deleting-marks.ts), and a fork or handoff reads the source again once made: marked,
// it waits for the delete, and goes (404) when its source did, or stays when the delete was refused for it.
import { describe, expect, it } from "vitest";
import type { SessionRecord } from "../protocol/session.js";
import type { TestDaemon } from "../testing/daemon.js";
import { adminCall as call, checkpointedEchoSession } from "../testing/dependents.js";
import { holdAfterMaking, holdDependentsRead, markSeenAfterMaking } from "../testing/held-delete.js";
import { withTwoDaemons } from "../testing/keyed-cluster.js";
import { useNatsCluster } from "../testing/nats-bed.js";

const bed = useNatsCluster({ nodes: 1 });

type Making = { route: "fork" | "handoff"; body: unknown };
const makings: Making[] = [
  { route: "fork", body: {} },
  { route: "handoff", body: { to: "echo" } },
];

/** A checkpointed session of node A, closed: a fork or handoff of it on node B runs there, not forwarded to A. */
async function closedSource(a: TestDaemon): Promise<string> {
  const id = await checkpointedEchoSession(a);
  expect((await call(a, "POST", `/v1/sessions/${id}/close`)).status).toBe(200);
  return id;
}

describe("a fork or handoff on another node while a delete of its source is under way", () => {
  it.each(makings)(
    "a $route made on node B during node A's delete waits for it and goes with its source (404)",
    async ({ route, body }) => {
      await withTwoDaemons(bed, `during-${route}`, true, async ({ a, b, nodeB }) => {
        const id = await closedSource(a);
        const held = holdDependentsRead(a);
        const deleted = call(a, "DELETE", `/v1/sessions/${id}`);
        await held.reached;
        const seen = markSeenAfterMaking(nodeB.store, id);
        const answer = call(b, "POST", `/v1/sessions/${id}/${route}`, body);
        await Promise.race([seen, answer]);
        held.release();
        const [deleteAnswer, answered] = [await deleted, await answer];
        expect(deleteAnswer.status, JSON.stringify(deleteAnswer.body)).toBe(204);
        expect(answered.status, JSON.stringify(answered.body)).toBe(404);
        expect((answered.body.error as { message: string }).message).toBe(`no session "${id}"`);
        // No session left, on either node, names a parent that is gone.
        for (const d of [a, b]) {
          const sessions = (await call(d, "GET", "/v1/sessions")).body.sessions as SessionRecord[];
          expect(sessions.filter((s) => (s.forked_from ?? s.handoff_from) !== undefined)).toEqual([]);
        }
      });
    },
  );

  it.each(makings)(
    "node A's delete during a $route made on node B is refused naming it (409), and the $route stays (201)",
    async ({ route, body }) => {
      await withTwoDaemons(bed, `refused-${route}`, true, async ({ a, b, nodeB }) => {
        const id = await closedSource(a);
        const held = holdAfterMaking(nodeB.store);
        const answer = call(b, "POST", `/v1/sessions/${id}/${route}`, body);
        await held.reached;
        const refused = await call(a, "DELETE", `/v1/sessions/${id}`);
        expect(refused.status, JSON.stringify(refused.body)).toBe(409);
        // The refused delete took its mark off: the fork, reading its source again, does not wait for it.
        held.release();
        const made = await answer;
        expect(made.status, JSON.stringify(made.body)).toBe(201);
        expect(JSON.stringify(refused.body)).toContain(made.body.id as string);
        const source = await call(b, "GET", `/v1/sessions/${id}`);
        expect(source.status).toBe(200);
        expect(source.body.deleting).toBeUndefined();
      });
    },
  );

  it("a mark left by a node that died is void once old: a fork stays and a delete marks over it", async () => {
    await withTwoDaemons(bed, "void-mark", true, async ({ a, b, nodeA }) => {
      const id = await closedSource(a);
      const at = new Date(Date.now() - 3_600_000).toISOString();
      await nodeA.store.update(id, { deleting: { node: "node-gone", at } });
      const fork = await call(b, "POST", `/v1/sessions/${id}/fork`, {});
      expect(fork.status, JSON.stringify(fork.body)).toBe(201);
      const refused = await call(b, "DELETE", `/v1/sessions/${id}`);
      expect(refused.status, JSON.stringify(refused.body)).toBe(409);
      expect(JSON.stringify(refused.body)).toContain(fork.body.id as string);
      expect((await call(b, "DELETE", `/v1/sessions/${fork.body.id}`)).status).toBe(204);
      expect((await call(b, "DELETE", `/v1/sessions/${id}`)).status).toBe(204);
    });
  });
});
